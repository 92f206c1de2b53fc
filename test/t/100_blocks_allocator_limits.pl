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
#   goes on above every value it handed out.
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
$node->stop;

done_testing();
