# Block prefetch (src/blocks/blockcache.c): seq_reserve_block() and
# seq_next() of strategy 'table' carve from ranges the allocator committed
# ahead into shared memory.
#
# 1. Clients stream seq_reserve_block(name, 1000), seq_reserve_block(name)
#    and seq_next() on one sequence while another session keeps calling
#    seq_advance(), seq_alter() (which give the IDs prefetched back to the
#    row) and updates the row by hand (the trigger drops the cache): no ID
#    is handed out twice, and every ID handed out lies below the row's
#    next_block_start.
# 2. A sequence nobody uses holds no range after
#    uidgen.allocator_idle_timeout, and its allocator leaves then.  A kill -9
#    where seq_advance() has freed the cache entry and not yet moved the row
#    back hands nothing out twice.
# 2b. Counting down (increment -3) as counting up (increment 3): the shared
#    cache asks for its next range once about 10% of the current one is
#    used, not when it is empty: reserved_ahead grows while most of the
#    current range is still held.
# 3. Synchronous replication: the commit of every refill is waited for, so
#    a synchronous standby promoted with uidgen.promotion_skip = 0 (no skip
#    to hide a loss) hands out nothing the old primary handed out before it
#    was stopped with "immediate" while its clients were streaming and the
#    standby received nothing (its WAL receiver stopped).  Asynchronously
#    (synchronous_standby_names unset) the same run hands IDs out twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use lib 'test';
use UidgenTest;

my $node = uidgen_node('prefetch',
	init => { allows_streaming => 1 },
	'uidgen.allocator_idle_timeout' => '2s',
	# (part 3: every refill's commit waits for the synchronous standby; on a
	# loaded machine that can take seconds, and a 55P03 there would end the
	# test without saying whether anything repeated)
	'uidgen.block_timeout' => '60s',
	restart_after_crash => 'on',
	log_statement => 'none');
$node->safe_psql('postgres', q{SELECT seq_create('pf', block_size => 100)});

# The ranges in a client's output lines: "first|last" or "value".
sub ranges_of
{
	my (@lines) = @_;
	my @r;
	for (@lines)
	{
		push @r, [ $1, $2 ] if /^(\d+)\|(\d+)$/;
		push @r, [ $1, $1 ] if /^(\d+)$/;
	}
	return @r;
}

######## 1. changes of the row while clients carve
my @scripts = (
	"SELECT first_id, last_id FROM seq_reserve_block('pf', 1000);\n" x 20000,
	"SELECT first_id, last_id FROM seq_reserve_block('pf', 1000);\n" x 20000,
	"SELECT first_id, last_id FROM seq_reserve_block('pf');\n" x 20000,
	"SELECT seq_next('pf');\n" x 50000);
my $clients = start_clients($node, @scripts);
wait_for_lines(100, map { $_->{out} } @$clients)
  or die 'the clients received nothing';
my $changes = 0;
for my $i (1 .. 40)
{
	my $sql = (
		"SELECT seq_advance('pf', 0)",
		"SELECT seq_alter('pf', max_value => 9223372036854775807)",
		"SELECT seq_advance('pf', (SELECT next_block_start + 5000 FROM id_sequences WHERE name = 'pf'))",
		"UPDATE id_sequences SET created_at = created_at WHERE name = 'pf'")[ $i % 4 ];
	$node->safe_psql('postgres', $sql);
	$changes++;
	usleep(50_000);    # (paced: the changes spread over the clients' run)
}
stop_clients($clients, 120);
is(client_errors($clients), '', 'no client got an error');
my @got = ranges_of(client_lines($clients));
note scalar(@got) . " ranges handed out around $changes changes";
cmp_ok(scalar(@got), '>', 1000, 'the clients were served throughout');
is(range_overlap(\@got, []), 0, 'no ID handed out twice across seq_advance(), seq_alter() and updates');
my $max = 0;
$max = $_->[1] > $max ? $_->[1] : $max for @got;
cmp_ok($node->safe_psql('postgres', q{SELECT next_block_start FROM id_sequences WHERE name = 'pf'}),
	'>', $max, "next_block_start lies above every ID handed out ($max)");
# (a fresh range, too short to ask for the next one yet)
$node->safe_psql('postgres', q{SELECT seq_advance('pf', 0); SELECT seq_reserve_block('pf', 1)});
is($node->safe_psql('postgres', q{
	SELECT next_id + reserved_ahead = next_block_start
	  FROM id_sequences_prefetch WHERE name = 'pf'}), 't',
	'next_id and reserved_ahead add up to next_block_start');

######## 2. idle release
my $held = $node->safe_psql('postgres', q{
	SELECT reserved_ahead FROM id_sequences_prefetch WHERE name = 'pf'});
note "held ahead after the clients: $held";
$node->safe_psql('postgres', q{SELECT * FROM seq_reserve_block('pf', 1)});
cmp_ok($node->safe_psql('postgres', q{
	SELECT reserved_ahead FROM id_sequences_prefetch WHERE name = 'pf'}), '>', 0,
	'a sequence in use holds a range ahead');
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM seq_prefetched()}),
	'a sequence nobody uses holds no range after uidgen.allocator_idle_timeout');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'uidgen allocator'}),
	'and its allocator leaves');
my @after = @{ seq_blocks($node, 'postgres', 'pf', 20) };
is(range_overlap(\@got, \@after), 0, 'what comes after the release was never handed out');

######## 2a. kill -9 where seq_advance() has freed the cache entry and not
# yet moved the row back (crash point "unprefetch-after-release")
$clients = start_clients($node,
	("SELECT first_id, last_id FROM seq_reserve_block('pf', 1000);\n" x 20000) x 2);
wait_for_lines(50, map { $_->{out} } @$clients)
  or die 'the clients received nothing';
my $offset = -s $node->logfile;
set_crash_point($node, 'unprefetch-after-release');
$node->psql('postgres', "SELECT seq_advance('pf', 0)", on_error_die => 0);
wait_crash_restart($node, 'unprefetch-after-release', $offset);
set_crash_point($node, '');
stop_clients($clients, 60);
push @got, @after, ranges_of(client_lines($clients));
@after = @{ seq_blocks($node, 'postgres', 'pf', 20) };
is(range_overlap(\@got, \@after), 0,
	'kill -9 after seq_advance() freed the cache entry: no ID handed out twice');

######## 2b. the refill is asked for early, in both directions
# (idle release out of the way: the entries must stay while polled)
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET uidgen.allocator_idle_timeout = '600s';
	SELECT pg_reload_conf();
	SELECT seq_create('up3', start => 1, increment => 3, block_size => 100);
	SELECT seq_create('dn3', start => -1, increment => -3, block_size => 100);
});
for my $name ('up3', 'dn3')
{
	# the first range, and what it holds once the first value is carved
	$node->safe_psql('postgres', "SELECT seq_next('$name')");
	my $held = $node->safe_psql('postgres',
		"SELECT reserved_ahead FROM id_sequences_prefetch WHERE name = '$name'");
	cmp_ok($held, '>=', 19, "$name: the first range holds $held values ahead");
	# 15% of the range used, then no more
	my $draw = int(($held + 1) * 0.15);
	$node->safe_psql('postgres',
		"SELECT count(seq_next('$name')) FROM generate_series(1, $draw)");
	my $left = $held - $draw;
	ok($node->poll_query_until('postgres', qq{
		SELECT reserved_ahead > $left FROM id_sequences_prefetch WHERE name = '$name'}),
		"$name: after $draw of " . ($held + 1) . " values, the next range is added before this one is used up");
	is($node->safe_psql('postgres', qq{
		SELECT p.next_id || ' ' || (p.next_id + p.reserved_ahead * s.increment = p.next_block_start)
		  FROM id_sequences_prefetch p JOIN id_sequences s USING (name) WHERE name = '$name'}),
		($name eq 'up3' ? 1 + 3 * ($draw + 1) : -1 - 3 * ($draw + 1)) . ' true',
		"$name: next_id is the next value, and next_id + reserved_ahead * increment = next_block_start");
}
$node->safe_psql('postgres', q{
	ALTER SYSTEM RESET uidgen.allocator_idle_timeout;
	SELECT pg_reload_conf();
});

######## 3. synchronous replication loses no refill
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('prefetch_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "uidgen.promotion_skip = 0\nuidgen.worker_id = 1\n");
$standby->start;
$node->append_conf('postgresql.conf', "synchronous_standby_names = '*'\n");
$node->reload;
$node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'})
  or die 'the standby is not synchronous';
push @got, @after;
# The standby stops receiving (its WAL receiver is stopped) while the
# clients stream for 3 s: asynchronously, the primary would go on
# committing and handing out ranges the standby never gets.
# (first a burst, so that the shared cache holds a large range)
push @got, ranges_of(split /\n/, $node->safe_psql('postgres', q{
	SELECT (b).first_id || '|' || (b).last_id FROM (
		SELECT seq_reserve_block('pf', 1000) AS b FROM generate_series(1, 5000) OFFSET 0) s}));
my $walrcv = $standby->safe_psql('postgres', 'SELECT pid FROM pg_stat_wal_receiver');
kill 'STOP', $walrcv;
$clients = start_clients($node,
	("SELECT first_id, last_id FROM seq_reserve_block('pf', 1000);\n" x 50000) x 3,
	"SELECT seq_next('pf');\n" x 100000);
# 3 s of streaming (time must pass), and at least until the clients were
# handed something (their sessions may start late on a loaded machine)
usleep(3_000_000);
wait_until(sub { scalar(ranges_of(client_lines($clients))) > 0 });
$node->stop('immediate');
kill 'CONT', $walrcv;
stop_clients($clients, 60);
my @primary = ranges_of(client_lines($clients));
cmp_ok(scalar(@primary), '>', 0,
	'the primary handed out ranges while the standby received nothing');
$standby->promote;
my @promoted = @{ seq_blocks($standby, 'postgres', 'pf', 50) };
push @promoted, map { [ $_, $_ ] } split /\n/,
  $standby->safe_psql('postgres', q{SELECT seq_next('pf') FROM generate_series(1, 200)});
is(range_overlap([ @got, @primary ], \@promoted), 0,
	'the promoted synchronous standby hands out nothing the primary handed out (no skip)');
$standby->stop;

done_testing();
