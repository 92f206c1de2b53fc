# Guarantee (issue 25, part 4): one block sequence for the whole Citus
# cluster.  On a worker every seq_* call acts on the coordinator's
# id_sequences (replicas/citusblocks.c): seq_create() there, ranges of
# seq_reserve_block() committed there, seq_next() served from blocks the
# worker reserved there.  So values from every node never repeat: a
# distributed table with DEFAULT seq_next() filled from every node at once
# and by a pushed-down INSERT ... SELECT, and seq_reserve_block() from every
# node, give distinct values and disjoint ranges.  With the coordinator
# stopped a worker serves what it holds, then fails with SQLSTATE 08006
# naming the coordinator; it resumes when the coordinator is back.  kill -9
# of a worker mid-use loses what it held (a gap), never repeats it.  A
# sequence dropped and created again is not served from a worker's old
# blocks.  Distributing id_sequences is refused; forced (with
# citus.enable_unsafe_triggers) every seq_* call is refused, with a hint
# that undoes it (undistribute_table() cannot: the extension owns it).
# With a step (issue 22, part 1) a worker carves the coordinator's ranges
# with the row's increment: every node's values on the lattice, none
# repeated, descending ones decreasing, the last value at the int64 edges
# served without overflow, a changed increment served from the next
# unused value.
#
# Needs Citus (scripts/citus.sh); skipped without.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;
use lib 'test';
use UidgenTest;

plan skip_all => citus_available() if citus_available();

# (a lease of 5 s: each change of a sequence waits up to two of them; part
# 3 needs the block it takes to outlive the coordinator's stop)
my %conf = ('uidgen.block_timeout' => 3000, 'uidgen.citus_block_lease' => 5000);
my $coord = citus_node('co', %conf);
my @workers = map { citus_node($_, %conf) } ('w1', 'w2');
citus_cluster($coord, @workers);
my @nodes = ($coord, @workers);

# 1. Created on a worker: the coordinator's row.
$workers[0]->safe_psql('postgres', q{SELECT seq_create('inv', block_size => 100)});
is($coord->safe_psql('postgres', q{SELECT count(*) FROM id_sequences WHERE name = 'inv'}),
	'1', 'seq_create() on a worker creates the row on the coordinator');
is($workers[0]->safe_psql('postgres', q{SELECT count(*) FROM id_sequences}),
	'0', "the worker's own id_sequences stays empty");
like(psql_error($workers[1], q{SELECT seq_create('inv')}),
	qr/ERROR:\s+42710:\s+block sequence "inv" already exists/,
	"seq_create() on the other worker: the coordinator's error, with its SQLSTATE");
like(psql_error($workers[1], q{SELECT seq_next('nope')}),
	qr/ERROR:\s+42704:/, 'an unknown sequence on a worker: 42704, as on the coordinator');

# A gapless sequence's numbers belong to a transaction on the coordinator:
# a worker refuses them, the coordinator serves them.
$coord->safe_psql('postgres', q{SELECT seq_create('gl', strategy => 'gapless')});
like(psql_error($workers[0], q{SELECT seq_next('gl')}),
	qr/0A000.*gapless block sequence "gl" cannot be used on a Citus worker/,
	'gapless on a worker: seq_next() refused (0A000)');
like(psql_error($workers[1], q{SELECT * FROM seq_reserve_block('gl', 3)}),
	qr/0A000/, 'gapless on a worker: seq_reserve_block() refused');
is($coord->safe_psql('postgres', q{SELECT seq_next('gl')}), '1',
	'gapless on the coordinator: 1, nothing was taken by the workers');
$coord->safe_psql('postgres', q{SELECT seq_drop('gl')});

# 2. Every node at once: a distributed table with DEFAULT seq_next(), and
# seq_reserve_block() from every node.
$coord->safe_psql('postgres', q{
	CREATE TABLE t (id bigint DEFAULT seq_next('inv'), k int, node text);
	SELECT create_distributed_table('t', 'k');
	CREATE TABLE src (k int);
	SELECT create_distributed_table('src', 'k', colocate_with => 't');
	INSERT INTO src SELECT generate_series(1, 1000);
	CREATE TABLE ranges (first_id bigint, last_id bigint, node text);
	SELECT create_reference_table('ranges');
});
my $insert = q{INSERT INTO t (k, node) SELECT g, 'b' FROM generate_series(1, 200) g;} . "\n";
my $reserve = q{INSERT INTO ranges SELECT first_id, last_id, 'r' FROM seq_reserve_block('inv', 37);} . "\n";
my @clients = map { start_clients($_, ($insert x 10) x 2, $reserve x 20) } @nodes;
$coord->safe_psql('postgres', q{INSERT INTO t (k, node) SELECT k, 'p' FROM src});
stop_clients($_) for @clients;
is(join('', map { client_errors($_) } @clients), '', 'clients on every node at once: no error');
my ($rows, $distinct) = split /\|/, $coord->safe_psql('postgres',
	q{SELECT count(*), count(DISTINCT id) FROM t});
cmp_ok($rows, '>=', 13000, "rows from every node ($rows)");
is($distinct, $rows, 'DEFAULT seq_next() from every node: every value distinct');
is( $coord->safe_psql('postgres', q{
		SELECT count(*) FROM ranges a JOIN ranges b
		    ON a.first_id < b.first_id AND b.first_id <= a.last_id}),
	'0', 'seq_reserve_block() from every node: disjoint ranges');
is( $coord->safe_psql('postgres', q{
		SELECT count(*) FROM t JOIN ranges r ON t.id BETWEEN r.first_id AND r.last_id}),
	'0', 'no value of seq_next() inside a reserved range');
is($coord->safe_psql('postgres', q{SELECT count(*) FROM ranges}), '60',
	'every reservation answered (20 per node)');

# 3. The coordinator stopped: a worker serves what it holds, then fails.
$coord->safe_psql('postgres', q{SELECT seq_alter('inv', block_size => 500)});
my $first = $workers[0]->safe_psql('postgres', q{SELECT seq_next('inv')});
$coord->stop;
my @held = split /\n/, $workers[0]->safe_psql('postgres',
	q{SELECT seq_next('inv') FROM generate_series(1, 499)});
is(scalar(@held), 499, 'coordinator down: the worker serves the 499 IDs it holds');
is($held[-1], $first + 499, 'consecutive, from its block');
my $t0 = Time::HiRes::time();
my $err = psql_error($workers[0], q{SELECT seq_next('inv')});
like($err,
	qr/ERROR:\s+08006:\s+the citus coordinator is unreachable for block sequences.*DETAIL:.*coordinator's \(/s,
	'then SQLSTATE 08006, naming the coordinator as unreachable');
unlike($err, qr/password/i, 'the detail holds no credentials');
cmp_ok(Time::HiRes::time() - $t0, '<', 30, 'the failure comes within the bound');
like(psql_error($workers[1], q{SELECT * FROM seq_reserve_block('inv', 5)}),
	qr/ERROR:\s+08006:/, 'seq_reserve_block() on a worker: 08006 too');

# 4. The coordinator back: the worker resumes, above everything.
$coord->start;
my $resumed = $workers[0]->safe_psql('postgres', q{SELECT seq_next('inv')});
my $max_before = $coord->safe_psql('postgres',
	q{SELECT greatest((SELECT max(id) FROM t), (SELECT max(last_id) FROM ranges))});
cmp_ok($resumed, '>', $held[-1], 'coordinator back: the worker resumes');
cmp_ok($resumed, '>', $max_before, 'above every value handed out');

# 5. kill -9 of a worker mid-use: a gap, never a repeat.
$coord->safe_psql('postgres', q{TRUNCATE t});
my @busy = map { start_clients($_, ($insert x 40)) } ($coord, $workers[1], $workers[0]);
# mid-use: rows committed, and an INSERT running on the worker
wait_until(sub {
	$coord->safe_psql('postgres', 'SELECT count(*) > 0 FROM t') eq 't'
	  && $workers[0]->safe_psql('postgres', q{SELECT count(*) > 0 FROM pg_stat_activity
		WHERE query LIKE 'INSERT INTO t %' AND pid <> pg_backend_pid()}) eq 't';
}) or die 'the clients did not get going';
kill9_and_wait($workers[0]);
$workers[0]->start;
stop_clients($_) for @busy;
$workers[0]->safe_psql('postgres', $insert x 5);
($rows, $distinct) = split /\|/, $coord->safe_psql('postgres',
	q{SELECT count(*), count(DISTINCT id) FROM t});
cmp_ok($rows, '>', 1000, "rows around the kill -9 ($rows)");
is($distinct, $rows, 'kill -9 of a worker mid-use: no value repeated');

# 6. Dropped and created again: no worker serves the old blocks.
$workers[1]->safe_psql('postgres', q{SELECT seq_create('again', block_size => 100)});
is($workers[1]->safe_psql('postgres', q{SELECT seq_next('again')}), '1',
	'worker 2 holds 1..100 of "again"');
$workers[0]->safe_psql('postgres', q{SELECT seq_drop('again'); SELECT seq_create('again', block_size => 100)});
is($coord->safe_psql('postgres', q{SELECT seq_next('again'); SELECT last_id FROM seq_reserve_block('again', 10)}),
	"1\n11", 'recreated: the coordinator hands out 1 to 11');
cmp_ok($workers[1]->safe_psql('postgres', q{SELECT seq_next('again')}), '>', 11,
	'worker 2 forgot its block of the dropped sequence: above 11, not 2');
is($workers[0]->safe_psql('postgres', q{SELECT seq_advance('again', 5000)}), '5001',
	'seq_advance() on a worker: the coordinator answers');
cmp_ok($workers[1]->safe_psql('postgres', q{SELECT seq_next('again')}), '>', 5000,
	'after seq_advance() no worker serves below it');

# 6b. Steps (issue 22, part 1): a worker carves the coordinator's ranges
# with the row's increment.  Values of every node on the lattice start +
# k*increment, none repeated, each backend's in the sequence's direction;
# a worker's block of a descending sequence steps down by 3, one block
# after the other; at the int64 edges the last value (one increment from
# the edge) is served, then 2200H; seq_reserve_block() on a worker is n
# values on the lattice.  (A block of the coordinator is block_size IDs or
# none: the edge sequences hold 3 blocks exactly.)
$coord->safe_psql('postgres', q{
	SELECT seq_create('ten', start => 5, block_size => 50, increment => 10);
	SELECT seq_create('down', start => 1000000, block_size => 40, increment => -3);
	SELECT seq_create('edge_up', start => 9223372030854775807, block_size => 2, increment => 1000000000);
	SELECT seq_create('edge_down', start => -9223372030854775808, block_size => 2, increment => -1000000000);
});
# one backend of a worker, nobody else: 100 values of three blocks of 40
my ($src, $out, $serr) = $workers[0]->psql('postgres',
	q{SELECT seq_next('down') FROM generate_series(1, 100)});
is($serr, '', 'a descending sequence on a worker: 100 values, no error');
my @down = split /\n/, $out;
is_deeply(\@down, [ map { 1000000 - 3 * $_ } 0 .. 99 ],
	'a worker serves 1000000, 999997, ..., 999703: each block stepped down by 3, the next block below');
for my $edge ([ 'edge_up', '9223372030854775807', 1 ], [ 'edge_down', '-9223372030854775808', -1 ])
{
	my ($seq, $start, $sign) = @$edge;
	($src, $out, $serr) = $workers[1]->psql('postgres',
		"SELECT seq_next('$seq') FROM generate_series(1, 6)");
	is( $out,
		$coord->safe_psql('postgres',
			"SELECT (${start}::bigint + $sign * g * 1000000000::bigint)::text FROM generate_series(0, 5) g"),
		"$seq on a worker: its 6 values, in blocks of 2, up to the last one before the int64 edge");
	like(psql_error($workers[1], "SELECT seq_next('$seq')"), qr/ERROR:\s+2200H:/,
		"$seq on a worker: then 2200H, nothing past the edge");
}
# every node at once: seq_next() of both, seq_reserve_block() of 7 of both
my @streams;
my @step_clients;
for my $node (@nodes)
{
	for my $seq ('ten', 'down')
	{
		push @step_clients, start_clients($node,
			("SELECT seq_next('$seq') FROM generate_series(1, 100);\n" x 5) x 2,
			"SELECT first_id, last_id FROM seq_reserve_block('$seq', 7);\n" x 20);
		push @streams, [ $node->name, $seq, $step_clients[-1] ];
	}
}
stop_clients($_) for @step_clients;
is(join('', map { client_errors($_) } @step_clients), '', 'steps on every node at once: no error');
my %inc = (ten => 10, down => -3);
my %origin = (ten => 5, down => 1000000);
my (%seen, @off, @repeated, @backwards, @bad_ranges);
$seen{down}{$_}++ for @down;
my %from_workers = (ten => 0, down => 0);
for my $stream (@streams)
{
	my ($node, $seq, $clients) = @$stream;
	my $inc = $inc{$seq};
	for my $c (@$clients[0, 1])
	{
		my @v = split /\n/, slurp_file($c->{out});
		for my $i (0 .. $#v)
		{
			push @off, "$node $seq $v[$i]" if ($v[$i] - $origin{$seq}) % $inc != 0;
			push @repeated, "$seq $v[$i]" if $seen{$seq}{ $v[$i] }++;
			push @backwards, "$node $seq $v[$i-1] $v[$i]"
			  if $i > 0 && ($v[$i] - $v[ $i - 1 ]) * $inc <= 0;
			$from_workers{$seq}++ if $node ne $coord->name;
		}
	}
	for my $line (split /\n/, slurp_file($clients->[2]{out}))
	{
		my ($f, $l) = split /\|/, $line;
		push @bad_ranges, "$node $seq $f $l"
		  if ($f - $origin{$seq}) % $inc != 0 || $l != $f + 6 * $inc;
		for my $k (0 .. 6)
		{
			push @repeated, "$seq range " . ($f + $k * $inc) if $seen{$seq}{ $f + $k * $inc }++;
		}
	}
}
my $count = 0;
$count += scalar(keys %{ $seen{$_} }) for keys %seen;
cmp_ok($from_workers{$_}, '==', 2000, "$_: 2000 values of seq_next() from the workers") for ('ten', 'down');
is($count, 2 * 3 * (1000 + 140) + 100, 'every value and range counted (ten, down: 3 nodes x (1000 + 20 x 7), and the 100 above)')
  or diag("counted $count");
is(join(', ', @off[0 .. ($#off < 4 ? $#off : 4)]), '', 'every value of seq_next() on its lattice (start + k*increment)');
is(join(', ', @repeated[0 .. ($#repeated < 4 ? $#repeated : 4)]), '',
	'no value repeated across the coordinator and the workers, ranges included');
is(join(', ', @backwards[0 .. ($#backwards < 4 ? $#backwards : 4)]), '',
	"each backend's values in the sequence's direction (down: decreasing)");
is(join(', ', @bad_ranges[0 .. ($#bad_ranges < 4 ? $#bad_ranges : 4)]), '',
	'seq_reserve_block(seq, 7) on every node: first on the lattice, last = first + 6*increment');
# seq_alter() of the increment while a worker holds a block: the worker
# serves the new step from the next unused value, above all it served
my $before = $workers[0]->safe_psql('postgres', q{SELECT seq_next('ten')});
$coord->safe_psql('postgres', q{SELECT seq_alter('ten', increment => 20)});
my @after = split /\n/, $workers[0]->safe_psql('postgres',
	q{SELECT seq_next('ten') FROM generate_series(1, 5)});
my $max_ten = (sort { $b <=> $a } keys %{ $seen{ten} })[0];
cmp_ok($after[0], '>', ($max_ten > $before ? $max_ten : $before),
	"after seq_alter(increment => 20) the worker serves above every value of 'ten' handed out");
is_deeply([ map { $_ - $after[0] } @after ], [ 0, 20, 40, 60, 80 ],
	'and steps by the new increment, 20');

# Figures (no check: for docs/citus.md): seq_next() rows/s, 100,000 in
# one statement, on the coordinator and on a worker, block_size 1000.
$coord->safe_psql('postgres', q{SELECT seq_create('bench', block_size => 1000)});
for my $node ($coord, $workers[1])
{
	my $t = Time::HiRes::time();
	$node->safe_psql('postgres', q{SELECT count(seq_next('bench')) FROM generate_series(1, 100000)});
	diag(sprintf('seq_next() on %s: %.0f rows/s', $node->name, 100000 / (Time::HiRes::time() - $t)));
}

# 7. Distributing id_sequences.
like(psql_error($coord, q{SELECT create_reference_table('id_sequences')}),
	qr/ERROR:/, 'create_reference_table(id_sequences): refused');
my ($ret) = $coord->psql('postgres',
	q{SET citus.enable_unsafe_triggers = on; SELECT create_reference_table('id_sequences')});
SKIP:
{
	skip 'Citus refused even with citus.enable_unsafe_triggers', 5 if $ret != 0;
	for my $node ($coord, $workers[0])
	{
		like(psql_error($node, q{SELECT seq_next('inv')}),
			qr/ERROR:\s+55000:\s+block sequences are refused while id_sequences is distributed by citus.*HINT:.*master_remove_partition_metadata/s,
			$node->name . ': forced: every seq_* call refused, naming the way back');
	}
	# the way back the hint gives (undistribute_table() fails: the extension owns the table)
	my ($hint) = psql_error($coord, q{SELECT seq_next('inv')}) =~ /HINT:\s+[^\n]*?: (SELECT citus_drop_all_shards[^\n]*;)/;
	my ($undo, $out, $uerr) = $coord->psql('postgres', $hint // 'SELECT no_hint()');
	is("$undo", '0', "the hint's statement undoes it");
	cmp_ok($coord->safe_psql('postgres', q{SELECT seq_next('inv')}), '>', $resumed,
		'then block sequences serve again on the coordinator, above what was handed out');
	cmp_ok($workers[1]->safe_psql('postgres', q{SELECT seq_next('inv')}), '>', $resumed,
		'and on the workers');
}

# 8. uidgen dropped and created again (Citus propagates both): no worker
# serves a block of the old sequences.
$workers[1]->safe_psql('postgres', q{SELECT seq_create('fresh', block_size => 100)});
is($workers[1]->safe_psql('postgres', q{SELECT seq_next('fresh')}), '1', 'worker 2 holds 1..100 of "fresh"');
$coord->safe_psql('postgres', q{DROP TABLE t, src, ranges; DROP EXTENSION uidgen CASCADE; CREATE EXTENSION uidgen;
	SELECT seq_create('fresh', block_size => 100); SELECT seq_reserve_block('fresh', 10)});
cmp_ok($workers[1]->safe_psql('postgres', q{SELECT seq_next('fresh')}), '>', 10,
	'after DROP and CREATE EXTENSION uidgen, worker 2 serves above the 10 reserved, not 2');

$_->stop for @nodes;
done_testing();
