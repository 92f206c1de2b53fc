# Guarantee: a copy of a server does not share its ID space.  A server that
# starts as a standby or a restore (standby.signal, recovery.signal), from a
# base backup (backup_label), or whose state file was written for another
# timeline, system or data directory is a copy; if its uidgen.worker_id is
# the one of the server it was copied from (as a copied configuration
# gives), then once it is writable it refuses snowflake_next(),
# seq_reserve_block() and seq_next() with SQLSTATE 55000 ("copied from"),
# while uuidv7_next() keeps working, until it gets a worker id of its own
# (restart) or an operator runs uidgen_take_over().  Its block sequences,
# which no worker id separates from the original's, stay fenced (55000)
# until uidgen_take_over(), and then skip ahead before they serve.  The
# original, restarted or crashed in place, is no copy and keeps generating.
#
# Every snowflake ID and block sequence value any server hands out, even
# from a call that should have failed, is collected; no value may appear
# twice.  Scenarios:
#  (a) a standby promoted while its primary goes on generating
#  (b) a pg_basebackup clone started as a second primary
#  (c) a cold copy (cp -a) of the stopped original, both started
#  (d) the original restarted and crashed in place
#  (e) a point-in-time restore started beside the original (last: the
#      original is then declared gone)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

# Every value handed out: snowflake IDs, and block sequence values (blocks
# expanded), each with the servers that handed it out.
my (%snowflakes, %blocks);

# Record the output lines of queries that tag their rows: "s|id" for a
# snowflake ID, "b|first|last" for a block, "n|value" for seq_next().
sub collect
{
	my ($from, @lines) = @_;
	for (@lines)
	{
		if (/^s\|(\d+)$/) { push @{ $snowflakes{$1} }, $from; }
		elsif (/^b\|(\d+)\|(\d+)$/) { push @{ $blocks{$_} }, $from for $1 .. $2; }
		elsif (/^n\|(\d+)$/) { push @{ $blocks{$1} }, $from; }
	}
	return;
}

# How many values were handed out more than once (each extra time counts).
sub repeats
{
	my ($h) = @_;
	my $n = 0;
	$n += @$_ - 1 for values %$h;
	return $n;
}

# Report and check the repeats among everything collected so far that were
# not reported before.
my ($reported_s, $reported_b) = (0, 0);

sub check_repeats
{
	my ($what) = @_;
	my ($s, $b) = (repeats(\%snowflakes) - $reported_s, repeats(\%blocks) - $reported_b);
	note(sprintf('%s: %d snowflake IDs, %d block sequence values collected in all; new repeats: %d and %d',
		$what, scalar(keys %snowflakes), scalar(keys %blocks), $s, $b));
	is($s, 0, "$what: no snowflake ID handed out twice");
	is($b, 0, "$what: no block sequence value handed out twice");
	($reported_s, $reported_b) = ($reported_s + $s, $reported_b + $b);
	return;
}

# Block sequence values handed out by a copy once settled (given a worker
# id of its own, or after uidgen_take_over()), kept apart: see
# check_settled_blocks().
my %settled;

sub generate_settled_blocks
{
	my ($node, $sql) = @_;
	for (split /\n/, $node->safe_psql('postgres', $sql))
	{
		if (/^b\|(\d+)\|(\d+)$/) { $settled{$_}++ for $1 .. $2; }
		elsif (/^n\|(\d+)$/) { $settled{$1}++; }
	}
	return;
}

# A settled copy's id_sequences is its original's as it was when the copy
# was made.  After uidgen_take_over() its block sequences skip ahead
# (uidgen.promotion_skip) before they serve, past the blocks the original
# handed out after the copy (a restore to a point before them).
sub check_settled_blocks
{
	my ($what) = @_;
	my $n = grep { $blocks{$_} } keys %settled;
	note(sprintf('%s: block sequence values of the settled copy that the original handed out too: %d of %d',
		$what, $n, scalar keys %settled));
	is($n, 0, "$what: no block sequence value of the settled copy is one of the original's");
	%settled = ();
	return;
}

# A copy that has a worker id of its own, but whose block sequences wait
# for uidgen_take_over(): they still continue from the original's values.
sub check_blocks_fenced
{
	my ($node, $what) = @_;
	for my $q (
		[ 'seq_reserve_block()', q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)} ],
		[ 'seq_next()', q{SELECT 'n', seq_next('blocks')} ])
	{
		my ($err, $ret, $out) = psql_error($node, $q->[1]);
		collect($node->name, split /\n/, $out);
		like($err, qr/ERROR:\s+55000: block sequences of a copied data directory are fenced until it is taken over/,
			"$what: $q->[0] fails with 55000, fenced");
	}
	is(uidgen_status($node)->{block_sequences_fenced}, 't', "$what: block_sequences_fenced");
	return;
}

# Run tagged queries on $node and collect what they return.
sub generate
{
	my ($node, $sql) = @_;
	collect($node->name, split /\n/, $node->safe_psql('postgres', $sql));
	return;
}

# The queries a refusing copy must refuse: each must fail with 55000 and
# "copied from"; whatever they return anyway is collected.
sub check_refuses
{
	my ($node, $what) = @_;
	for my $q (
		[ 'snowflake_next()', q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)} ],
		[ 'seq_reserve_block()', q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)} ],
		[ 'seq_next()', q{SELECT 'n', seq_next('blocks')} ])
	{
		my ($err, $ret, $out) = psql_error($node, $q->[1]);
		collect($node->name, split /\n/, $out);
		like($err, qr/ERROR:\s+55000:[^\n]*copied from/,
			"$what: $q->[0] fails with 55000, copied from");
	}
	like( psql_error($node, 'SELECT snowflake_next()'),
		qr/HINT:[^\n]*uidgen\.worker_id[^\n]*uidgen_take_over\(\)/,
		"$what: the hint names uidgen.worker_id and uidgen_take_over()");
	like($node->safe_psql('postgres', 'SELECT uuidv7_next()'),
		qr/^[0-9a-f]{8}-[0-9a-f]{4}-7/, "$what: uuidv7_next() works");
	return;
}

# Check that $node is a copy of worker 1, for $reason.
sub check_copy_status
{
	my ($node, $what, $reason) = @_;
	my $st = uidgen_status($node);
	is($st->{state}, 'copy', "$what: state is copy");
	is($st->{copy_reason}, $reason, "$what: copy_reason is $reason") if defined $reason;
	is($st->{origin_worker_id}, '1', "$what: origin_worker_id is 1");
	return $st;
}

# Check that $node is itself: state ok, vouching for its own system and
# timeline, no origin.
sub check_own_status
{
	my ($node, $what, $timeline) = @_;
	my $st = uidgen_status($node);
	is($st->{state}, 'ok', "$what: state is ok");
	is($st->{origin_worker_id}, '', "$what: origin_worker_id is NULL");
	is($st->{copy_reason}, '', "$what: copy_reason is NULL");
	is($st->{system_identifier},
		$node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
		"$what: system_identifier is the server's");
	is($st->{timeline}, $timeline, "$what: timeline is $timeline");
	return $st;
}

# The fewest lines any of @files holds.
sub min_lines
{
	my $min;
	for (@_)
	{
		my $n = () = slurp_file($_) =~ /\n/g;
		$min = $n if !defined $min || $n < $min;
	}
	return $min;
}

my $orig = uidgen_node(
	'orig',
	init => { allows_streaming => 1, has_archiving => 1 },
	'uidgen.worker_id' => 1,
	'uidgen.sequence_bits' => 4);

# A node made from a backup of $orig, not archiving (into the original's
# archive, which the restore in (e) reads).
sub copy_node
{
	my ($name, $backup, %params) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($orig, $backup, %params);
	$node->append_conf('postgresql.conf', 'archive_mode = off');
	return $node;
}

$orig->safe_psql('postgres', q{
	SELECT seq_create('blocks', block_size => 10);
	CREATE TABLE halt ()});
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 1000)});
generate($orig, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)});
check_own_status($orig, 'original', 1);

######## (a) a standby promoted while its primary goes on generating
$orig->backup('bk_standby');
my $standby = copy_node('standby', 'bk_standby', has_streaming => 1);
$standby->start;
$orig->wait_for_catchup($standby);

# Two clients on the original, each handing out snowflake IDs, blocks and
# seq_next() values until a row appears in table halt.
my $loop = <<'SQL';
SELECT EXISTS (SELECT FROM halt) AS halted \gset
\if :halted
\q
\endif
SELECT 's', snowflake_next() FROM generate_series(1, 20);
SELECT 'b', * FROM seq_reserve_block('blocks', 10);
SELECT 'n', seq_next('blocks');
SELECT pg_sleep(0.01) \g /dev/null
SQL
my $clients = start_clients($orig, ($loop x 10000) x 2);
my @outs = map { $_->{out} } @$clients;
ok(wait_for_lines(100, @outs), '(a) precondition: the original is generating');

$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
check_copy_status($standby, '(a) promoted standby', 'standby');
check_refuses($standby, '(a) promoted standby');

# A worker id of its own makes it a server of its own.
$standby->stop;
$standby->append_conf('postgresql.conf', 'uidgen.worker_id = 2');
$standby->start;
my $tl = $standby->safe_psql('postgres',
	q{SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int});
cmp_ok($tl, '>', 1, '(a) precondition: the promoted standby is on a new timeline');
check_own_status($standby, '(a) promoted standby with worker id 2', $tl);
generate($standby, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
# It was refused as a copy: its block sequences, which a worker id does not
# separate from the original's, wait for uidgen_take_over().
check_blocks_fenced($standby, '(a) promoted standby with worker id 2');

# The original went on generating all along, and still does.
my $lines = min_lines(@outs);
ok(wait_for_lines($lines + 20, @outs), '(a) the original still generates');
$orig->safe_psql('postgres', 'INSERT INTO halt DEFAULT VALUES');
stop_clients($clients);
is(client_errors($clients), '', '(a) no call on the original failed');
collect('orig', client_lines($clients));
check_own_status($orig, '(a) original', 1);
check_repeats('(a) promoted standby');
$standby->stop;

######## (b) a pg_basebackup clone started as a second primary
$orig->backup('bk_clone');
my $clone = copy_node('clone', 'bk_clone');
ok(-e $clone->data_dir . '/backup_label', '(b) precondition: the clone has a backup_label');
$clone->start;
is($clone->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f',
	'(b) the clone runs as a primary');
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
check_copy_status($clone, '(b) clone', 'base backup');
check_refuses($clone, '(b) clone');
generate($orig, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)}) for 1 .. 5;
# A restart does not make it the original.
$clone->restart;
my $st = check_copy_status($clone, '(b) clone after a restart', 'base backup');
check_refuses($clone, '(b) clone after a restart');
# A worker id of its own: snowflake IDs, but its blocks stay fenced.
$clone->stop;
$clone->append_conf('postgresql.conf', 'uidgen.worker_id = 3');
$clone->start;
generate($clone, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
check_blocks_fenced($clone, '(b) clone with worker id 3');
# Taken over (the original declared gone; it handed out blocks after the
# clone was made): the clone's block sequences skip ahead before they serve.
$clone->safe_psql('postgres', 'SELECT uidgen_take_over()');
is(uidgen_status($clone)->{block_sequences_fenced}, 'f',
	'(b) clone taken over: its block sequences are no longer fenced');
generate_settled_blocks($clone, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)}) for 1 .. 10;
check_settled_blocks('(b) clone after uidgen_take_over()');
check_own_status($orig, '(b) original', 1);
check_repeats('(b) clone');
$clone->stop;

######## (c) a cold copy of the stopped original, both started
$orig->stop;
my $cold = PostgreSQL::Test::Cluster->new('cold');
system('cp', '-a', $orig->data_dir, $cold->data_dir) == 0 or die 'cp -a failed';
$cold->append_conf('postgresql.conf', 'port = ' . $cold->port . "\narchive_mode = off");
$orig->start;
$cold->start;
check_own_status($orig, '(c) original beside its cold copy', 1);
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
generate($orig, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)}) for 1 .. 5;
check_copy_status($cold, '(c) cold copy', 'data directory');
check_refuses($cold, '(c) cold copy');
check_repeats('(c) cold copy');
$cold->stop;

######## (d) the original restarted and crashed in place
$orig->restart;
check_own_status($orig, '(d) original after a restart', 1);
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
kill9_and_wait($orig);
$orig->start;
check_own_status($orig, '(d) original after kill -9', 1);
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
generate($orig, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)});
generate($orig, q{SELECT 'n', seq_next('blocks')});
check_repeats('(d) original');

######## (e) a point-in-time restore started beside the original
$orig->backup('bk_pitr');
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
generate($orig, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)}) for 1 .. 5;
$orig->safe_psql('postgres', q{SELECT pg_create_restore_point('target')});
# After the target: IDs and blocks the restored server knows nothing of.
generate($orig, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)}) for 1 .. 5;
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 2000)});
my $walfile = $orig->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$orig->safe_psql('postgres', 'SELECT pg_switch_wal()');
$orig->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'WAL not archived';

my $pitr = copy_node('pitr', 'bk_pitr', has_restoring => 1, standby => 0);
$pitr->append_conf('postgresql.conf', q{
recovery_target_name = 'target'
recovery_target_action = 'promote'
});
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
$st = check_copy_status($pitr, '(e) restore', 'recovery');
note("(e) timeline before the take-over: $st->{timeline}");
check_refuses($pitr, '(e) restore');

# The original's last burst leaves its clock at the drift bound, 1 s ahead
# of the wall clock; then the operator declares it gone (it generates no
# more) and the restore takes over its worker id, at once: its IDs must
# start above the burst.
generate($orig, q{SELECT 's', snowflake_next() FROM generate_series(1, 30000)});
$pitr->safe_psql('postgres', 'SELECT uidgen_take_over()');
check_own_status($pitr, '(e) restore after uidgen_take_over()', 2);
generate($pitr, q{SELECT 's', snowflake_next() FROM generate_series(1, 30000)});
generate_settled_blocks($pitr, q{SELECT 'b', * FROM seq_reserve_block('blocks', 10)}) for 1 .. 20;
$pitr->restart;
check_own_status($pitr, '(e) restore after uidgen_take_over() and a restart', 2);
generate($pitr, q{SELECT 's', snowflake_next() FROM generate_series(1, 1000)});
check_repeats('(e) restore');
check_settled_blocks('(e) restore after uidgen_take_over()');
$pitr->stop;

$orig->stop;
done_testing();
