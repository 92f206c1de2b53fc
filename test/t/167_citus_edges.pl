# Edges of the Citus modules (replicas/citus.c, citusblocks.c,
# citusconn.c) on one coordinator and one worker:
# - uidgen_citus_refuse() ignores NULL elements; a refusal holds for the
#   worker id it was found with only, also at a backend's first ID;
# - a node whose Citus metadata is tampered with (in a transaction rolled
#   back): no pg_dist_local_group row, group id -1, a node unplaced after it
#   adopted a group id (keeps it);
# - a worker whose pg_dist_node has no active coordinator: 55000; a worker
#   database without citus serves its block sequences locally;
# - the worker's connection to the coordinator: a statement cancelled while
#   it waits leaves the connection mid-statement, and the next call
#   connects again; the coordinator's backend terminated during a call
#   (08006, not its 57P01) and while the connection is idle (the next call
#   connects again); a call under another role connects again, as that
#   role; the coordinator's error with its SQLSTATE, DETAIL and HINT; NULL
#   arguments and results of seq_coordinator_call(); a role the
#   coordinator does not know;
# - the coordinator's postmaster stopped (SIGSTOP): a connection times out
#   (08006, "No answer within uidgen.block_timeout."), a second backend
#   waiting for that refill times out with 55P03, a name too long is
#   refused without asking the coordinator;
# - all 64 entries of the worker's block cache in use: one ID straight from
#   the coordinator; seq_forget(NULL) frees them;
# - a refill slower than the lease: thrown away after seq_forget(); 55P03
#   when every block comes back with its lease over;
# - the worker killed at crash point citus-refill-after-reserve (its block
#   committed on the coordinator, not yet in its cache): a gap, no repeat.
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

my %conf = ('uidgen.block_timeout' => 3000, 'uidgen.citus_block_lease' => 60000);
my $coord = citus_node('co', %conf);
my $w1 = citus_node('w1', %conf);

# 1. uidgen_citus_refuse() on the coordinator (worker id 0): a NULL element
# is not worker id 0.
citus_cluster($coord, $w1);
$coord->safe_psql('postgres', 'SELECT snowflake_next()');
is($coord->safe_psql('postgres', q{SELECT uidgen_citus_refuse(ARRAY[NULL]::int[], false)}),
	'f', 'the coordinator (worker id 0): a NULL element is not worker id 0');

# 2. Tampered Citus metadata on the worker, each in a transaction rolled back.
my $group = $w1->safe_psql('postgres', 'SELECT groupid FROM pg_dist_local_group');
is($w1->safe_psql('postgres', 'SELECT snowflake_worker(snowflake_next())'), $group,
	"the worker adopts its group id $group");
like(psql_error($w1, q{BEGIN; DELETE FROM pg_dist_local_group; SELECT snowflake_next();}),
	qr/ERROR:\s+55000:\s+could not read this node's citus group id.*DETAIL:\s+pg_dist_local_group does not hold one row/s,
	'no pg_dist_local_group row: 55000');
like(psql_error($w1, q{BEGIN; UPDATE pg_dist_local_group SET groupid = -1; SELECT snowflake_next();}),
	qr/ERROR:\s+55000:\s+citus group id -1 does not fit in \d+ worker bits/,
	'group id -1: refused (55000)');
is($w1->safe_psql('postgres', q{BEGIN; UPDATE pg_dist_local_group SET groupid = 0;
	DELETE FROM pg_dist_node; SELECT snowflake_worker(snowflake_next()); ROLLBACK;}),
	$group, 'unplaced after it adopted a group id: generates under the adopted one');

# A refusal holds for the worker id it was found with.
is($w1->safe_psql('postgres', "SELECT uidgen_citus_refuse(ARRAY[$group], false)"), 't',
	"the worker refuses worker id $group");
like(psql_error($w1, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000:\s+worker id $group is also used by another node/,
	'... and snowflake_next() is refused');
my $other = $group + 1;
is($w1->safe_psql('postgres', qq{BEGIN; UPDATE pg_dist_local_group SET groupid = $other;
	SELECT uidgen_citus_worker(); SELECT snowflake_worker(snowflake_next()); ROLLBACK;}),
	"$other,citus\n$other", 'given another worker id (adopted), the node generates again');
# (the server adopted $other; a new backend adopts $group again, at its
# first snowflake_next(), which must not go out under the refused one)
like(psql_error($w1, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000:\s+worker id $group is also used/,
	"back at worker id $group: the first ID of a new backend is refused too");
is($w1->safe_psql('postgres', q{SELECT uidgen_citus_refuse('{}', true)}), 'f', 'the refusal lifted');
is($w1->safe_psql('postgres', 'SELECT snowflake_worker(snowflake_next())'), $group,
	"generates under $group again");

# 3. Block sequences: the route and the coordinator's whereabouts.
$coord->safe_psql('postgres', q{SELECT seq_create('s', block_size => 100)});
is($w1->safe_psql('postgres', q{BEGIN; DELETE FROM pg_dist_local_group; SELECT seq_on_coordinator(); ROLLBACK;}),
	'f', 'no local group row: the route is local');
like(psql_error($w1, q{BEGIN; UPDATE pg_dist_node SET isactive = false WHERE groupid = 0;
	SELECT * FROM seq_reserve_block('s', 1);}),
	qr/ERROR:\s+55000:\s+this citus worker does not know its coordinator/,
	'no active coordinator in pg_dist_node: 55000');
$w1->safe_psql('postgres', 'CREATE DATABASE nocitus');
$w1->safe_psql('nocitus', 'CREATE EXTENSION uidgen');
$w1->safe_psql('nocitus', q{SELECT seq_create('s')});
is($w1->safe_psql('nocitus', q{SELECT seq_on_coordinator(), seq_next('s'), count(*) FROM id_sequences GROUP BY 1, 2}),
	'f|1|1', 'a worker database without citus: its own id_sequences');

# 4. The connection to the coordinator.
$coord->safe_psql('postgres', q{
	CREATE FUNCTION cov_sleep(float8) RETURNS int LANGUAGE sql AS 'SELECT 1 FROM pg_sleep($1)';
	CREATE FUNCTION cov_echo(text) RETURNS text LANGUAGE sql AS 'SELECT $1';
	CREATE FUNCTION cov_die() RETURNS bool LANGUAGE sql
		AS 'SELECT pg_terminate_backend(pg_backend_pid())';
	CREATE FUNCTION cov_fail() RETURNS void LANGUAGE plpgsql AS $$BEGIN
		RAISE EXCEPTION 'cov failure' USING ERRCODE = '22023', DETAIL = 'Cov detail.', HINT = 'Cov hint.';
	END$$;});
my ($err, $ret, $out) = psql_error($w1, q{
	SET uidgen.block_timeout = 1000;
	SET statement_timeout = 300;
	SELECT seq_coordinator_call('cov_sleep', ARRAY['5']);
	RESET statement_timeout;
	SELECT seq_coordinator_call('cov_sleep', ARRAY['0']);}, on_error_stop => 0);
like($err, qr/ERROR:\s+57014:/, 'cancelled while waiting for the coordinator: 57014');
unlike($err, qr/ERROR:.*ERROR:/s, "... and the next call in that session connects again ($err)");
is($out, '1', '... and is answered');
($err, $ret, $out) = psql_error($w1, q{
	SELECT seq_coordinator_call('cov_die', '{}');
	SELECT seq_coordinator_call('cov_echo', ARRAY['after']);}, on_error_stop => 0);
like($err, qr/ERROR:\s+08006:\s+the citus coordinator is unreachable.*DETAIL:.*terminating connection/s,
	'the coordinator backend terminated during the call: 08006, its reason in the DETAIL');
is($out, 'after', "... and the next call in that session connects again ($err)");

# A psql meta-command that runs "sql" on the coordinator from within a
# worker's session, so that the session keeps its connection meanwhile.
sub on_coordinator
{
	my ($sql) = @_;
	return sprintf(q{\! psql -X -h '%s' -p %d -d postgres -Atq -c "%s"}, $coord->host, $coord->port, $sql);
}

# The coordinator's backend terminated while the connection is idle (as a
# coordinator restart does): the next call notices and connects again.
my $kill_conns = on_coordinator(q{SELECT count(pg_terminate_backend(pid, 5000)) > 0 FROM (SELECT pid FROM pg_stat_activity WHERE application_name = 'uidgen citus blocks' OFFSET 0) a});
($err, $ret, $out) = psql_error($w1, qq{
	SELECT seq_coordinator_call('cov_echo', ARRAY['before']);
	$kill_conns
	SELECT seq_coordinator_call('cov_echo', ARRAY['idle']);}, on_error_stop => 0);
is($out, "before\nt\nidle", "the coordinator's backend terminated while idle: the next call connects again ($err)");

# A call under another role (SET ROLE) connects again, as that role (the
# user of the coordinator's newest such connection).
$coord->safe_psql('postgres', q{CREATE ROLE cov_alice LOGIN;
	SELECT seq_create('as_super', block_size => 10), seq_create('as_alice', block_size => 10)});
my $users = on_coordinator(q{SELECT usename FROM pg_stat_activity WHERE application_name = 'uidgen citus blocks' ORDER BY backend_start DESC LIMIT 1});
is($w1->safe_psql('postgres', qq{
	SELECT seq_next('as_super');
	$users
	SET ROLE cov_alice;
	SELECT seq_next('as_alice');
	$users}),
	"1\npostgres\n1\ncov_alice", 'a call under another role: the connection to the coordinator is that role\'s');
like(psql_error($w1, q{SELECT seq_coordinator_call('cov_fail', '{}')}),
	qr/ERROR:\s+22023:\s+cov failure\nDETAIL:\s+Cov detail\.\nHINT:\s+Cov hint\.\nCONTEXT:\s+on the citus coordinator/,
	"the coordinator's error: its SQLSTATE, DETAIL and HINT");
is($w1->safe_psql('postgres', q{SELECT seq_coordinator_call('cov_echo', ARRAY[NULL]) IS NULL,
	seq_coordinator_call('cov_echo', ARRAY['x'])}),
	't|x', 'seq_coordinator_call(): a NULL argument and a NULL result');
is($w1->safe_psql('postgres', q{SET uidgen.block_timeout = 2147483647;
	SELECT seq_coordinator_call('cov_echo', ARRAY['y'])}),
	'y', 'uidgen.block_timeout at its maximum: the bound of a call is capped, not wrapped');

# A role the coordinator does not know: the connection fails, libpq's
# reason in the DETAIL.
$w1->safe_psql('postgres',
	'SET citus.enable_ddl_propagation TO off; CREATE ROLE lonely LOGIN SUPERUSER');
$w1->psql('postgres', q{SELECT * FROM seq_reserve_block('s', 1)}, stderr => \$err,
	extra_params => [ '-U', 'lonely', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+08006:\s+the citus coordinator is unreachable for block sequences\nDETAIL:.*role "lonely" does not exist/,
	'a role the coordinator does not know: 08006 with the reason');

# 5. The coordinator's postmaster stopped: no answer to a new connection.
$coord->safe_psql('postgres', q{SELECT seq_create('w', block_size => 10)});
my $pm = (split /\n/, slurp_file($coord->data_dir . '/postmaster.pid'))[0];
kill 'STOP', $pm;
# (a check that hangs while it is stopped must not hang the run: wake it)
$SIG{ALRM} = sub { kill 'CONT', $pm; die "the coordinator's stop lasted over 120 s\n"; };
alarm 120;
my $t0 = Time::HiRes::time();
my $refill = start_clients($w1, q{SET uidgen.block_timeout = 2000; SELECT seq_next('w');});
# until that refill waits for the stopped coordinator
wait_until(sub {
	$w1->safe_psql('postgres', q{SELECT count(*) > 0 FROM pg_stat_activity
		WHERE query LIKE '%seq_next(''w'')%' AND pid <> pg_backend_pid()
		  AND wait_event IN ('Extension', 'UidgenCitusCoordinator')}) eq 't';
}) or die 'the refill does not wait for the coordinator';
($err) = psql_error($w1, q{SET uidgen.block_timeout = 400; SELECT seq_next('w')});
like($err, qr/ERROR:\s+55P03:\s+timed out waiting for a block of sequence "w".*Another backend of this worker has been reserving/s,
	'a backend waiting for another\'s refill: 55P03 after its block_timeout');
like(psql_error($w1, q{SELECT seq_next(repeat('x', 70))}), qr/ERROR:\s+42704:/,
	'a name too long: 42704, without asking the coordinator');
stop_clients($refill);
my $took = Time::HiRes::time() - $t0;
kill 'CONT', $pm;
alarm 0;
like(slurp_file($refill->[0]{err}),
	qr/ERROR:\s+the citus coordinator is unreachable for block sequences\nDETAIL:.*No answer within uidgen\.block_timeout\.$/m,
	'the refilling backend: 08006, no answer within uidgen.block_timeout');
cmp_ok($took, '<', 6, "... within the bound ($took s)");
is($w1->safe_psql('postgres', q{SELECT seq_next('w')}), '1', 'the coordinator back: served from 1');

# 6. Every entry of the worker's block cache in use: one ID at a time.
$coord->safe_psql('postgres',
	q{SELECT seq_create('c' || g, block_size => 100) FROM generate_series(1, 64) g;
	  SELECT seq_create('extra', block_size => 100)});
$w1->safe_psql('postgres', q{SELECT seq_next('c' || g) FROM generate_series(1, 64) g});
is($w1->safe_psql('postgres', q{SELECT seq_next('extra'), seq_next('extra')}), "1|2",
	'all entries hold blocks: extra gets 1, 2');
is($coord->safe_psql('postgres', q{SELECT first_id FROM seq_reserve_block('extra', 1)}), '3',
	'... one at a time from the coordinator (no block taken)');
$w1->safe_psql('postgres', 'SELECT seq_forget(NULL)');
is($w1->safe_psql('postgres', q{SELECT seq_next('extra')}), '4', 'after seq_forget(NULL): 4');
is($coord->safe_psql('postgres', q{SELECT first_id FROM seq_reserve_block('extra', 1)}), '104',
	'... from a block of 100: the entries were freed');

# 7. A refill slower than the lease (a trigger on the coordinator holds
# each UPDATE of the row: "fg" until the test lets it go, on an advisory
# lock, "slow" 0.2 s): a block that comes back after seq_forget() is
# thrown away; blocks that come back with their lease over end with 55P03
# after uidgen.block_timeout.
$coord->safe_psql('postgres', q{
	SELECT seq_create('fg', block_size => 10), seq_create('slow', block_size => 10);
	CREATE FUNCTION cov_slow() RETURNS trigger LANGUAGE plpgsql
		AS $$BEGIN
			IF NEW.name = 'fg' THEN
				PERFORM pg_advisory_xact_lock(167);
			ELSE
				PERFORM pg_sleep(0.2);
			END IF;
			RETURN NEW;
		END$$;
	CREATE TRIGGER cov_slow BEFORE UPDATE ON id_sequences FOR EACH ROW
		WHEN (NEW.name IN ('fg', 'slow')) EXECUTE FUNCTION cov_slow();});
my $gate = $coord->background_psql('postgres');
$gate->query_safe('SELECT pg_advisory_lock(167)');
my $fg = start_clients($w1, q{SET uidgen.block_timeout = 60000; SELECT seq_next('fg');});
ok( $coord->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND objid = 167 AND NOT granted}),
	'precondition: the refill of "fg" is held on the coordinator');
$w1->safe_psql('postgres', q{SELECT seq_forget('fg')});
$gate->query_safe('SELECT pg_advisory_unlock(167)');
$gate->quit;
stop_clients($fg);
is(slurp_file($fg->[0]{out}), "11\n",
	'a block that came back after seq_forget(): thrown away, the next block served');
$coord->safe_psql('postgres', 'ALTER SYSTEM SET uidgen.citus_block_lease = 100; SELECT pg_reload_conf()');
like(psql_error($w1, q{SET statement_timeout = '10s'; SET uidgen.block_timeout = 1000; SELECT seq_next('slow')}),
	qr/ERROR:\s+55P03:\s+timed out waiting for a block of sequence "slow".*DETAIL:\s+The blocks reserved within uidgen.block_timeout \(1000 ms\) came back after their lease/s,
	'blocks that come back with their lease over: 55P03 after uidgen.block_timeout');

# 8. The worker killed after the coordinator committed its block, before
# the block reached its cache (crash point citus-refill-after-reserve):
# the block is a gap, the next one is served after the restart.
$coord->safe_psql('postgres', q{SELECT seq_create('kr', block_size => 10)});
arm_crash_point($w1, 'citus-refill-after-reserve', 'kill');
like(psql_error($w1, q{SELECT seq_next('kr')}),
	qr/server closed the connection|connection to server was lost/,
	'citus-refill-after-reserve: seq_next() lost its connection');
ok(wait_for_server_exit($w1), 'citus-refill-after-reserve: the worker went down');
is(count_in_log($w1, qr/uidgen crash point "citus-refill-after-reserve" reached/), 1,
	'citus-refill-after-reserve: the crash point was reached');
disarm_crash_point($w1);
$w1->start;
my $next = $w1->safe_psql('postgres', q{SELECT seq_next('kr')});
cmp_ok($next, '>', 10,
	"citus-refill-after-reserve, restarted: the block committed before the crash (1 to 10) is a gap ($next next)");

$w1->stop;
$coord->stop;
done_testing();
