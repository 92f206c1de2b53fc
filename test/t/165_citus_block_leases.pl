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
use List::Util qw(min);
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
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
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
# (the holder holds the row until it is terminated below, once the
# worker's backend waited in its refill and was terminated there)
my $holder = start_clients($coord,
	q{BEGIN; SELECT 1 FROM id_sequences WHERE name = 'b' FOR UPDATE; SELECT pg_sleep(300); COMMIT;});
my $holder_pid = backend_of($coord, q{SELECT pg_sleep(300)%});
defined $holder_pid or die 'the holder does not hold the row';
my $victim = start_clients($w1, q{SELECT seq_next('b');});
my $pid = backend_of($w1, q{SELECT seq_next(''b'')%});
ok(defined $pid, 'a worker backend waits in its refill');
$w1->safe_psql('postgres', "SELECT pg_terminate_backend($pid)") if defined $pid;
stop_clients($victim);
$coord->safe_psql('postgres', "SELECT pg_terminate_backend($holder_pid)");
stop_clients($holder);
my ($err, $ret, $out) = psql_error($w1, q{SELECT seq_next('b')});
is($ret, 0, "terminated mid-refill: the next seq_next() on that worker is served ($err)");
like($out, qr/^\d+$/, 'and returns an ID');

# (A) Lease expiry: the rest of a block is thrown away, a new one reserved.
$coord->safe_psql('postgres', q{SELECT seq_create('e', block_size => 1000)});
my ($e1) = seq_take($w1, 'e', 1);
Time::HiRes::usleep(2_500_000);    # (time must pass: the 2 s lease runs out)
my ($e2, $e3) = seq_take($w1, 'e', 2);
cmp_ok($e2, '>', $e1 + 999, "after its lease ran out the worker serves a new block ($e1, then $e2: a gap)");
is($e3, $e2 + 1, 'and serves it from then on');

# A worker's refills record leases without waiting for earlier ones: five
# blocks of one ID in a row, well within one lease.
$coord->safe_psql('postgres', q{SELECT seq_create('one', block_size => 1)});
# (the statement's time, not psql's start as well)
my $refills = statement_seconds($w1, q{SELECT seq_next('one') FROM generate_series(1, 5)});
cmp_ok($refills, '<', 1.5, sprintf('five refills in a row on a worker: %.2f s', $refills));

# A direct UPDATE lowering next_block_start on the coordinator, which tells
# no worker: it waits out the worker's lease, so no value repeats.
$coord->safe_psql('postgres', q{SELECT seq_create('u', block_size => 10)});
seq_take($w1, 'u', 1);
my $waited = timed_psql($coord, q{UPDATE id_sequences SET next_block_start = 1 WHERE name = 'u'});
# values handed out before the change may repeat (the UPDATE lowered it
# below them); the worker's rest of its block must not be among the new ones
my @u = (seq_take($coord, 'u', 10), seq_take($w1, 'u', 9));
is(count_repeats(@u), 0, sprintf('UPDATE next_block_start lower: no value repeated (the UPDATE waited %.1f s)', $waited));
cmp_ok($waited, '>=', 1.0, 'the UPDATE waited for the lease');

# The reviewer's reproduction: worker 2 disabled, the sequence dropped and
# created again, worker 2 activated: no value served twice.
$coord->safe_psql('postgres', q{SELECT seq_create('d', block_size => 20)});
seq_take($w2, 'd', 1);
my ($h2, $p2) = ($w2->host, $w2->port);
$coord->safe_psql('postgres', "SELECT citus_disable_node('$h2', $p2)");
$waited = timed_psql($coord, q{SELECT seq_drop('d'); SELECT seq_create('d', block_size => 20)});
citus_activate($coord, $h2, $p2);
my @d = (seq_take($w1, 'd', 19), seq_take($w2, 'd', 19));
is(count_repeats(@d), 0, sprintf('disabled worker, seq_drop + seq_create, activated: no value served twice (the drop waited %.1f s)', $waited));

# Worker 2 removed, the sequence advanced, worker 2 added back: nothing
# below the advance.
$coord->safe_psql('postgres', q{SELECT seq_create('adv', block_size => 50)});
my ($a1) = seq_take($w2, 'adv', 1);
$coord->safe_psql('postgres', "SELECT citus_remove_node('$h2', $p2)");
$coord->safe_psql('postgres', q{SELECT seq_advance('adv', 1000)});
$coord->safe_psql('postgres', "SELECT citus_add_node('$h2', $p2)");
my @a = seq_take($w2, 'adv', 5);
cmp_ok(min(@a), '>', 1000, "removed worker, seq_advance(1000), added back: it serves above 1000 ($a1, then $a[0])");

# TRUNCATE on the coordinator while a worker holds a block.
$coord->safe_psql('postgres', q{SELECT seq_create('tr', block_size => 10)});
seq_take($w1, 'tr', 1);
$waited = timed_psql($coord, q{TRUNCATE id_sequences; SELECT seq_create('tr', block_size => 10)});
my @tr = (seq_take($coord, 'tr', 10), seq_take($w1, 'tr', 9));
is(count_repeats(@tr), 0, sprintf('TRUNCATE and re-create: no value repeated (TRUNCATE waited %.1f s)', $waited));

# The lease is in the row: a coordinator killed -9 and restarted still
# waits in seq_drop() (lease 5 s here, so that the restart leaves some).
$coord->safe_psql('postgres', q{ALTER SYSTEM SET uidgen.citus_block_lease = '5s'; SELECT pg_reload_conf()});
$coord->safe_psql('postgres', q{SELECT seq_create('k', block_size => 10)});
seq_take($w1, 'k', 1);
kill9_and_wait($coord);
$coord->start;
my $left = $coord->safe_psql('postgres',
	q{SELECT extract(epoch FROM worker_lease_until + interval '5 s' - clock_timestamp()) FROM id_sequences WHERE name = 'k'});
$waited = timed_psql($coord, q{SELECT seq_drop('k')});
cmp_ok($left, '>', 1, sprintf('the restarted coordinator still has the lease in the row (%.1f s to wait)', $left));
cmp_ok($waited, '>=', $left - 0.5, sprintf('and its seq_drop() waits it out (%.1f s)', $waited));

# A sequence numbered per period (issue 22, part 2): a worker's seq_next()
# is refused, by name (0A000 from the coordinator's seq_worker_lease()): a
# range a worker held could outlive the period.  seq_reserve_block() on a
# worker is the coordinator's (committed there, returned to the caller,
# nothing held): numbers of the period of the coordinator's clock.
$coord->safe_psql('postgres', q{SELECT seq_create('per', reset => 'day', max_value => 9999)});
my ($perr) = psql_error($w1, q{SELECT seq_next('per')});
like($perr, qr/0A000.*block sequence "per" numbered per period cannot be used on a Citus worker/s,
	"a worker's seq_next() of a sequence numbered per period: 0A000, naming it");
my $key = $coord->safe_psql('postgres', q{SELECT seq_period_key('day', 'UTC', now())});
is($w1->safe_psql('postgres', q{SELECT first_id || ',' || last_id FROM seq_reserve_block('per', 2)}),
	($key * 10000 + 1) . ',' . ($key * 10000 + 2),
	"a worker's seq_reserve_block(): the coordinator's numbers of the period, from start");
is($coord->safe_psql('postgres', q{SELECT seq_next('per')}), $key * 10000 + 3,
	'and the coordinator goes on after them');

$_->stop for ($coord, @workers);
done_testing();
