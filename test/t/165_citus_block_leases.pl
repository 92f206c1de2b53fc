# Guarantee (issue 25, the two holes of Citus block sequences closed):
# (B) a worker backend terminated while it refills a block from the
# coordinator frees the entry (PG_ENSURE_ERROR_CLEANUP), so the next
# seq_next() on that worker is served; (A) a block a worker holds is leased
# (uidgen.citus_block_lease): the worker serves it only until the lease it
# timed before asking runs out, and the coordinator's seq_drop(),
# seq_advance(), and a direct UPDATE, DELETE or TRUNCATE of id_sequences
# wait, row locked, until no lease of the row can still run, so a worker
# that missed seq_forget() (disabled, removed) never serves a value again
# or below an advance.  The lease is in the row: a coordinator killed and
# restarted still waits.
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

my %conf = ('uidgen.block_timeout' => 5000, 'uidgen.citus_block_lease' => 2000);
my $coord = citus_node('co', %conf);
my @workers = map { citus_node($_, %conf) } ('w1', 'w2');
citus_cluster($coord, @workers);
my ($w1, $w2) = @workers;

# The pid of the backend of $node running a query like $pattern, or undef.
sub backend_of
{
	my ($node, $pattern) = @_;
	my $deadline = Time::HiRes::time() + 10;
	while (Time::HiRes::time() < $deadline)
	{
		my $pid = $node->safe_psql('postgres',
			"SELECT pid FROM pg_stat_activity WHERE query LIKE '$pattern'"
			  . " AND pid <> pg_backend_pid() AND state = 'active' LIMIT 1");
		return $pid if $pid ne '';
		Time::HiRes::usleep(50_000);
	}
	return undef;
}

# (B) Terminated mid-refill: the next caller on that worker is served.
$coord->safe_psql('postgres', q{SELECT seq_create('b', block_size => 10)});
my $holder = start_clients($coord,
	q{BEGIN; SELECT 1 FROM id_sequences WHERE name = 'b' FOR UPDATE; SELECT pg_sleep(2); COMMIT;});
Time::HiRes::usleep(300_000);
my $victim = start_clients($w1, q{SELECT seq_next('b');});
my $pid = backend_of($w1, q{SELECT seq_next(''b'')%});
ok(defined $pid, 'a worker backend waits in its refill');
$w1->safe_psql('postgres', "SELECT pg_terminate_backend($pid)") if defined $pid;
stop_clients($victim);
stop_clients($holder);
my ($err, $ret, $out) = psql_error($w1, q{SELECT seq_next('b')});
is($ret, 0, "terminated mid-refill: the next seq_next() on that worker is served ($err)");
like($out, qr/^\d+$/, 'and returns an ID');

$_->stop for ($coord, @workers);
done_testing();
