# Guarantee (issue 25, the review of the Citus block leases): no change
# on the coordinator lets a worker serve a value again.  (A) TRUNCATE in a
# REPEATABLE READ transaction whose snapshot predates a worker's lease
# still waits (the leases read with the latest snapshot).  (C) DROP
# EXTENSION uidgen CASCADE waits out the leases of id_sequences, so a
# disabled worker cannot serve its old block after CREATE EXTENSION and
# seq_create().  (B) seq_worker_lease() of a sequence that does not exist
# raises 42704 (no lease, no range).  (D) an UPDATE that clears
# worker_lease_until waits as any change.  (E) seq_advance() into a
# disabled worker's block waits although it updates nothing.  (G) after a restart of the
# coordinator a change waits two leases from the start, even for a row
# with no lease recorded (one lost with the old server), and after a
# promotion two leases from the promotion.
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

my $lease = 3;		# seconds
my %conf = ('uidgen.block_timeout' => 5000, 'uidgen.citus_block_lease' => $lease * 1000);
my $coord = citus_node('co', %conf);
my @workers = map { citus_node($_, %conf) } ('w1', 'w2');
citus_cluster($coord, @workers);
my ($w1, $w2) = @workers;

# past the two leases that follow the coordinator's start (G)
Time::HiRes::usleep(2 * $lease * 1_000_000);

# (A) TRUNCATE in REPEATABLE READ, snapshot taken before the worker's lease.
$coord->safe_psql('postgres', q{SELECT seq_create('tr', block_size => 10)});
my $bg = $coord->background_psql('postgres');
$bg->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$bg->query_safe('SELECT count(*) FROM pg_class');
my ($first) = seq_take($w1, 'tr', 1);
my $t = Time::HiRes::time();
$bg->query_safe('TRUNCATE id_sequences');
$bg->query_safe(q{SELECT seq_create('tr', block_size => 10)});
$bg->query_safe('COMMIT');
my $waited = Time::HiRes::time() - $t;
$bg->quit;
# the value served before the change may come again (the sequence is new);
# the rest of the worker's block must not be among the new ones
my @tr = (seq_take($coord, 'tr', 10), seq_take($w1, 'tr', 9));
is(count_repeats(@tr), 0, sprintf('REPEATABLE READ TRUNCATE + re-create: no value repeated (TRUNCATE waited %.1f s)', $waited));
cmp_ok($waited, '>=', $lease - 1, 'the TRUNCATE waited for the lease');

# (B) No row, no lease.
my ($err, $ret) = psql_error($coord, q{SELECT seq_worker_lease('nope')});
like($err, qr/42704|does not exist/, "seq_worker_lease() of a missing sequence: 42704 ($err)");

# (C) DROP EXTENSION + CREATE EXTENSION with worker 2 disabled.
$coord->safe_psql('postgres', q{SELECT seq_create('dx', block_size => 20)});
my ($x) = seq_take($w2, 'dx', 1);
my ($h2, $p2) = ($w2->host, $w2->port);
$coord->safe_psql('postgres', "SELECT citus_disable_node('$h2', $p2)");
$waited = timed_psql($coord,
	q{DROP EXTENSION uidgen CASCADE; CREATE EXTENSION uidgen; SELECT seq_create('dx', block_size => 20)});
my @c = seq_take($coord, 'dx', 20);
my $out = '';
$w2->psql('postgres', q{SELECT seq_next('dx') FROM generate_series(1, 19)}, stdout => \$out);
my @w = split /\n/, $out;
is(count_repeats(@c, @w), 0, sprintf('worker disabled, DROP/CREATE EXTENSION, seq_create: no repeat (the drop waited %.1f s)', $waited));
cmp_ok($waited, '>=', $lease - 1, 'DROP EXTENSION waited for the lease');
citus_activate($coord, $h2, $p2);

# (D) The lease cleared by hand, then next_block_start lowered.
$coord->safe_psql('postgres', q{SELECT seq_create('lz', block_size => 10)});
($x) = seq_take($w1, 'lz', 1);
$waited = timed_psql($coord, q{UPDATE id_sequences SET worker_lease_until = NULL WHERE name = 'lz'});
$coord->safe_psql('postgres', q{UPDATE id_sequences SET next_block_start = 1 WHERE name = 'lz'});
my @lz = (seq_take($coord, 'lz', 10), seq_take($w1, 'lz', 9));
is(count_repeats(@lz), 0, sprintf('lease cleared by hand, then next_block_start lowered: no repeat (the clearing waited %.1f s)', $waited));
cmp_ok($waited, '>=', $lease - 1, 'clearing the lease waits as a change');

# (E) seq_advance() to a point inside the block a disabled worker holds,
# below the next unused ID, so that no UPDATE of the row follows (strategy
# 'sequence': the position is in its native sequence): seq_lock_row()
# waits for the lease all the same, and the worker serves nothing at or
# below that point afterwards.
$coord->safe_psql('postgres', q{SELECT seq_create('adv', block_size => 1000, strategy => 'sequence')});
($x) = seq_take($w2, 'adv', 1);
$coord->safe_psql('postgres', "SELECT citus_disable_node('$h2', $p2)");
$waited = timed_psql($coord, "SELECT seq_advance('adv', " . ($x + 499) . ')');
my @adv = seq_take($w2, 'adv', 5);
my @low = grep { $_ <= $x + 499 } @adv;
is(scalar(@low), 0, sprintf('seq_advance() into a disabled worker\'s block: it serves nothing at or below that point afterwards (got %s; the advance waited %.1f s)', join(',', @adv), $waited));
cmp_ok($waited, '>=', $lease - 1, 'seq_advance() with no UPDATE to make waited for the lease');
citus_activate($coord, $h2, $p2);

# (G) Restart: a change of a row never leased waits two leases from the start.
$coord->safe_psql('postgres', q{SELECT seq_create('g', block_size => 10)});
my $before = Time::HiRes::time();
$coord->restart;
$t = Time::HiRes::time();
$waited = timed_psql($coord, q{UPDATE id_sequences SET next_block_start = 100 WHERE name = 'g'});
my $due = $before + 2 * $lease - $t;
cmp_ok($waited, '>=', $due - 0.3,
	sprintf('after a restart a change waits two leases from the start (%.1f s, at least %.1f s due)', $waited, $due));
# (the statement's time, not psql's start as well)
$waited = statement_seconds($coord, q{UPDATE id_sequences SET next_block_start = 200 WHERE name = 'g'});
cmp_ok($waited, '<', 1, sprintf('and the next change does not (%.2f s)', $waited));

# (G) Promotion: a standby of a Citus node, up for more than two leases,
# promoted: its first change waits two leases from the promotion (a lease
# the old primary committed may not have reached it).
my $pri = citus_node('pri', %conf, init => { allows_streaming => 1 });
$pri->safe_psql('postgres', q{CREATE EXTENSION uidgen; SELECT seq_create('pg', block_size => 10)});
$pri->backup('bk');
my $sby = PostgreSQL::Test::Cluster->new('sby');
$sby->init_from_backup($pri, 'bk', has_streaming => 1);
unlink($sby->data_dir . '/uidgen.state');
$sby->start;
$pri->wait_for_catchup($sby);
Time::HiRes::usleep(2 * $lease * 1_000_000);    # (time must pass: up for two leases)
$before = Time::HiRes::time();
$sby->promote;
$sby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
$t = Time::HiRes::time();
$waited = timed_psql($sby, q{UPDATE id_sequences SET next_block_start = 100 WHERE name = 'pg'});
$due = $before + 2 * $lease - $t;
cmp_ok($waited, '>=', $due - 0.3,
	sprintf('after a promotion a change waits two leases (%.1f s, at least %.1f s due)', $waited, $due));
$waited = statement_seconds($sby, q{UPDATE id_sequences SET next_block_start = 200 WHERE name = 'pg'});
cmp_ok($waited, '<', 1, sprintf('and the next change does not (%.2f s)', $waited));

$_->stop for ($coord, @workers, $pri, $sby);
done_testing();
