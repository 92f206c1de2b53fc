# Guarantee: a block-sequence caller gets an error that says why, instead
# of a hang or a wrong answer, when its allocator cannot serve it:
# - no background worker slot is free (max_worker_processes taken by the
#   static workers): seq_reserve_block() and seq_next() fail at once with
#   53000, naming max_worker_processes, and again on the next call (the slot
#   is not left "launching", which would make that call wait out
#   uidgen.block_timeout);
# - the allocator is stuck (SIGSTOP) while seq_next() drains the shared
#   cache: seq_next() fails with 55P03 after uidgen.block_timeout
#   (blocks/blockcache.c), and once the allocator runs again seq_next()
#   goes on above every value it handed out;
# - the allocator is stuck while seq_reserve_block() waits for its answer
#   (blocks/allocqueue.c): 55P03 after uidgen.block_timeout, and the next
#   call, the allocator running again, gets a block above;
# - the allocator exits while it serves a request (held at crash point
#   "alloc-before-answer", after its commit, and terminated): the caller
#   asks again, and a new allocator answers with a block above every value
#   handed out, instead of the caller waiting out uidgen.block_timeout;
# - every allocator slot (uidgen.block_databases) serves another database:
#   seq_reserve_block() in one more database fails with 53400, naming
#   uidgen.block_databases, at once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

# 1. max_worker_processes = 2: the logical replication launcher and the
# keeper take both slots.
my $full = uidgen_node('full', max_worker_processes => 2,
	'uidgen.block_timeout' => '20s');
$full->safe_psql('postgres', "SELECT seq_create('s', block_size => 10)");
for my $call ("SELECT * FROM seq_reserve_block('s')", "SELECT * FROM seq_reserve_block('s')",
	"SELECT seq_next('s')")
{
	my $t0 = time();
	my $err = psql_error($full, $call);
	my $took = time() - $t0;
	like($err,
		qr/ERROR:\s+53000:\s+could not start the uidgen allocator for database "postgres".*DETAIL:\s+No background worker slot is free\..*HINT:\s+Raise "max_worker_processes"/s,
		"$call with no worker slot free: 53000, naming max_worker_processes");
	cmp_ok($took, '<', 10, "$call: at once (${took}s), not after uidgen.block_timeout");
}
is($full->safe_psql('postgres', "SELECT next_block_start FROM id_sequences WHERE name = 's'"),
	'1', 'nothing was reserved');
$full->stop;

# 2. A stuck allocator while seq_next() drains the cache.
my $node = uidgen_node('stuck');
$node->safe_psql('postgres', "SELECT seq_create('n', block_size => 5)");
my @got = ($node->safe_psql('postgres', "SELECT seq_next('n')"));
my $pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
like($pid, qr/^\d+$/, 'an allocator serves the database');
kill 'STOP', $pid;
my ($out, $err) = ('', '');
my $t0 = time();
$node->psql('postgres', q{
	SET uidgen.block_timeout = '1s';
	\set VERBOSITY verbose
	DO $$ DECLARE got bigint[] := '{}';
	BEGIN
		BEGIN
			FOR i IN 1 .. 100000 LOOP
				got := got || seq_next('n');
			END LOOP;
		EXCEPTION WHEN lock_not_available THEN
			RAISE NOTICE 'drained % %', cardinality(got), array_to_string(got, ',');
			RAISE;
		END;
	END $$;},
	stdout => \$out, stderr => \$err, timeout => 60);
my $took = time() - $t0;
kill 'CONT', $pid;
like($err,
	qr/ERROR:\s+55P03:\s+timed out waiting for the uidgen allocator to reserve IDs from block sequence "n".*DETAIL:\s+No block came within uidgen\.block_timeout \(1000 ms\)\./s,
	'seq_next() with the cache drained and the allocator stuck: 55P03 after uidgen.block_timeout');
cmp_ok($took, '<', 30, "within seconds (${took}s)");
my ($count, $ids) = $err =~ /NOTICE:\s+\S+:\s+drained (\d+) ([\d,]*)/;
ok(defined $count && $count > 0, 'seq_next() served what the cache held first (' . ($count // 'none') . ')');
push @got, split /,/, ($ids // '');
my $after = $node->safe_psql('postgres', "SELECT seq_next('n')");
cmp_ok($after, '>', (sort { $b <=> $a } @got)[0], 'the allocator resumed: seq_next() goes on above');
my %seen;
is(scalar(grep { $seen{$_}++ } @got, $after), 0, 'no value twice');
push @got, $after;

# 3. A stuck allocator while seq_reserve_block() waits for its answer, for
# a sequence of strategy 'sequence' (no cache in between: each call asks).
$node->safe_psql('postgres', "SELECT seq_create('q', block_size => 5, strategy => 'sequence')");
@got = split /\|/, $node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('q')");

# The largest value of 'q' handed out so far.
sub top { return (sort { $b <=> $a } @got)[0]; }

$pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
like($pid, qr/^\d+$/, 'an allocator serves the database again');
kill 'STOP', $pid;
$t0 = time();
$err = psql_error($node, q{SET uidgen.block_timeout = '1s';
	SELECT * FROM seq_reserve_block('q')}, timeout => 60);
$took = time() - $t0;
kill 'CONT', $pid;
like($err,
	qr/ERROR:\s+55P03:\s+timed out waiting for the uidgen allocator to reserve IDs from block sequence "q".*DETAIL:\s+No answer came within uidgen\.block_timeout \(1000 ms\)\./s,
	'seq_reserve_block() with the allocator stuck: 55P03 after uidgen.block_timeout');
cmp_ok($took, '<', 30, "within seconds (${took}s)");
my ($first, $last) = split /\|/, $node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('q')");
cmp_ok($first, '>', top(), 'the allocator resumed: seq_reserve_block() gets a block above');
push @got, $first .. $last;

# 4. The allocator exits while it serves a request: held after its commit,
# then terminated.  The caller (told at DEBUG1) asks again.
my $offset = -s $node->logfile;
set_crash_point($node, 'alloc-before-answer', 'wait');
my $clients = start_clients($node, q{SET client_min_messages = debug1;
SET uidgen.block_timeout = '120s';
SELECT 'b', * FROM seq_reserve_block('q');
});
ok(wait_for_log($node, qr/uidgen crash point "alloc-before-answer" reached/, $offset),
	'the allocator is held before it answers');
$pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
set_crash_point($node, '');
$t0 = time();
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
stop_clients($clients, 90);
$took = time() - $t0;
my ($line) = client_lines($clients);
like($line // '', qr/^b\|\d+\|\d+$/, 'the caller got a block after its allocator exited');
($first, $last) = (split /\|/, $line // '||')[1, 2];
cmp_ok($first // 0, '>', top(), 'the block is above every value handed out before');
cmp_ok($took, '<', 60, "well within uidgen.block_timeout (${took}s)");
like(client_errors($clients), qr/allocator exited while serving a request; asking again/,
	'the caller asked again (DEBUG1)');
unlike(client_errors($clients), qr/ERROR/, 'the caller had no error');
$node->stop;

# 5. One allocator slot, serving another database.
$node->append_conf('postgresql.conf', "uidgen.block_databases = 1\nuidgen.allocator_idle_timeout = 0\n");
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE d2');
$node->safe_psql('d2',
	"CREATE EXTENSION uidgen; SELECT seq_create('m', block_size => 5, strategy => 'sequence')");
$node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('q')");
$t0 = time();
$node->psql('d2', "SELECT * FROM seq_reserve_block('m')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ], stderr => \my $d2err);
$took = time() - $t0;
like($d2err,
	qr/ERROR:\s+53400:\s+too many databases are using block sequences.*DETAIL:\s+All 1 allocator slots \(uidgen\.block_databases\) serve other databases\..*HINT:\s+Raise uidgen\.block_databases/s,
	'seq_reserve_block() in a second database with one allocator slot: 53400, naming uidgen.block_databases');
cmp_ok($took, '<', 10, "at once (${took}s)");
$node->stop;

done_testing();
