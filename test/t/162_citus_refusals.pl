# Guarantee (review findings 902 and 903): no Citus node generates under a
# worker id another node may be using.
#
# 902: a standby of a Citus worker made before the worker's first ID has
# no worker id adopted; its group id (pg_dist_local_group, replicated) is
# its primary's.  Promoted while its old primary still runs (split brain),
# it must refuse as a copy with its origin's worker id until
# uidgen_take_over(), not adopt the group id and repeat the primary's IDs.
#
# 903: the refusal of a worker id that uidgen_citus_check() found on two
# nodes is durable (state file): a kill -9 and a crash restart do not end
# it.  How an operator lifts it: give the nodes distinct worker ids and run
# uidgen_citus_check() again, which lifts it, durably, once every node
# answers with a worker id of its own.
#
# Needs Citus (scripts/citus.sh); skipped without.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

plan skip_all => citus_available() if citus_available();

my $coord = citus_node('co');
my @workers = (citus_node('w1', init => { allows_streaming => 1 }), citus_node('w2'));
citus_cluster($coord, @workers);

# 902. A standby of worker 1 made before its first ID.
$workers[0]->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('w1s');
$standby->init_from_backup($workers[0], 'b', has_streaming => 1);
$standby->start;
my @primary = split /\n/, $workers[0]->safe_psql('postgres',
	'SELECT snowflake_next() FROM generate_series(1, 100)');
is(uidgen_status($workers[0])->{worker_id}, '1', 'worker 1 adopted group id 1 after the standby was made');
$workers[0]->wait_for_catchup($standby);
# split brain: the old primary stays up
$standby->promote;
like(psql_error($standby, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000:\s+this copy of a citus node would generate under the worker id of the server it was copied from/,
	'promoted while its primary runs: refused (55000), not adopting the group id');
is(uidgen_status($standby)->{state}, 'copy', "the promoted standby's uidgen_status() says copy");
like(psql_error($standby, 'SELECT uidgen_citus_worker()'),
	qr/ERROR:\s+55000:\s+this copy of a citus node would generate/,
	'uidgen_citus_worker() (what the check runs) adopts nothing on it either');
$standby->restart;
like(psql_error($standby, 'SELECT snowflake_next()'), qr/ERROR:\s+55000:\s+this copy of a citus node/,
	'restarted: still refused');
$workers[0]->safe_psql('postgres', 'SELECT snowflake_next()');
pass('the old primary goes on');
$workers[0]->stop;
$standby->safe_psql('postgres', 'SELECT uidgen_take_over()');
my @promoted = split /\n/, $standby->safe_psql('postgres',
	'SELECT snowflake_next() FROM generate_series(1, 10)');
my $st = uidgen_status($standby);
is("$st->{worker_id}|$st->{worker_id_source}", '1|citus',
	'after uidgen_take_over(): the group id, adopted');
cmp_ok($promoted[0], '>', max_snowflake(@primary), 'above every ID its primary issued');
$standby->stop;
$workers[0]->start;

# 903. Two nodes forced to one worker id: refused, across kill -9.
$workers[1]->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$workers[1]->restart;
my $refused = qr/ERROR:\s+55000:\s+worker id 1 is also used by another node of the citus cluster/;
# killed before the state file took it: nothing durable, and the check says
# that a node did not record its outcome
arm_crash_point($workers[1], 'refuse-before-file', 'kill');
my ($cret, $cout, $cerr) = $coord->psql('postgres', 'SELECT count(*) FROM uidgen_citus_check()');
wait_for_server_exit($workers[1]) or die 'w2 did not go down at the crash point';
like($cerr, qr/WARNING:\s+uidgen_citus_check\(\) could not record its outcome on every node/,
	'refuse-before-file: the check warns that a node failed to record its outcome');
is(count_in_log($workers[1], qr/uidgen crash point "refuse-before-file" reached/), 1,
	'refuse-before-file: the crash point was reached');
disarm_crash_point($workers[1]);
is(read_state_file($workers[1])->{refused_worker}, -1,
	'refuse-before-file: no refusal in the state file');
$workers[1]->start;
# durable before the check reports it: killed right after the state file took it
arm_crash_point($workers[1], 'refuse-after-file', 'kill');
($cret, $cout, $cerr) = $coord->psql('postgres', 'SELECT count(*) FROM uidgen_citus_check()');
wait_for_server_exit($workers[1]) or die 'w2 did not go down at the crash point';
like($cerr, qr/WARNING:\s+uidgen_citus_check\(\) could not record its outcome on every node/,
	'the check warns that a node failed to record its outcome');
disarm_crash_point($workers[1]);
$workers[1]->start;
like(psql_error($workers[1], 'SELECT snowflake_next()'), $refused,
	'w2 killed right after the state file took the refusal: refused after the restart');
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(worker_id || ':' || source || ':' || conflict, ',' ORDER BY worker_id, source)
		  FROM uidgen_citus_check()}),
	'0:citus:false,1:citus:true,1:setting:true',
	'uidgen_citus_check() lists both nodes with worker id 1');
kill9_and_wait($workers[1]);
$workers[1]->start;
like(psql_error($workers[1], 'SELECT snowflake_next()'), $refused,
	'w2 after kill -9 and restart: still refused');
is(uidgen_status($workers[1])->{state}, 'worker id conflict', 'w2: uidgen_status() says worker id conflict');
$workers[1]->stop;
is(read_state_file($workers[1])->{refused_worker}, 1, 'the refusal is in the state file');
$workers[1]->start;
like(psql_error($workers[0], 'SELECT snowflake_next()'), $refused, 'w1 refuses too');

# The way out: distinct worker ids, then the check again.
$workers[1]->append_conf('postgresql.conf', "uidgen.worker_id = 7\n");
$workers[1]->restart;
like(psql_error($workers[0], 'SELECT snowflake_next()'), $refused,
	'w2 moved to worker id 7: w1 refuses until the check runs again');
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(worker_id || ':' || source || ':' || conflict, ',' ORDER BY worker_id, source)
		  FROM uidgen_citus_check()}),
	'0:citus:false,1:citus:false,7:setting:false',
	'the check again: no conflict');
kill9_and_wait($workers[0]);
$workers[0]->start;
my @after = split /\n/, $workers[0]->safe_psql('postgres',
	'SELECT snowflake_next() FROM generate_series(1, 10)');
cmp_ok($after[0], '>', max_snowflake(@primary), 'w1 generates again, after a kill -9 too, above its IDs');
like(slurp_file($workers[0]->logfile), qr/uidgen no longer refuses snowflake IDs/, 'the lifted refusal is logged');
ok($workers[1]->safe_psql('postgres', 'SELECT snowflake_next()') > 0, 'w2 generates as worker 7');

# A node that does not answer keeps the refusals (its worker id is unknown).
$workers[1]->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$workers[1]->restart;
$coord->safe_psql('postgres', 'SELECT count(*) FROM uidgen_citus_check()');
$workers[1]->append_conf('postgresql.conf', "uidgen.worker_id = 7\n");
$workers[1]->restart;
$workers[1]->stop;
$coord->psql('postgres', 'SELECT count(*) FROM uidgen_citus_check()');
like(psql_error($workers[0], 'SELECT snowflake_next()'), $refused,
	'a check with a node down does not lift the refusal');

$_->stop for ($coord, $workers[0]);
done_testing();
