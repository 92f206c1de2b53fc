# Guarantee: under concurrent use, snowflake_next() and uuidv7_next() never
# return the same value twice (primary keys would reject it), each backend
# sees its IDs strictly increase, calls serialised by a lock get strictly
# increasing IDs whichever backend makes them, and a sustained burst never
# drives the clock further ahead of the wall clock than
# uidgen.max_clock_drift (also after that setting is changed by a reload):
# it waits instead; a snowflake burst does not run UUID timestamps ahead.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test';
use UidgenTest;

# A 6-bit sequence (64 IDs per ms): bursts easily outrun the clock.
my $node = uidgen_node('concurrency', 'uidgen.sequence_bits' => 6);
$node->safe_psql('postgres', q{
	CREATE TABLE sf (id bigint PRIMARY KEY, client int, k bigint, pid int);
	CREATE TABLE uu (u uuid PRIMARY KEY, client int, k int, pid int);
	CREATE SEQUENCE gs;
	CREATE TABLE g (seq bigint PRIMARY KEY, id bigint UNIQUE, u uuid UNIQUE)});

######## 4 clients, each numbering its own calls
$node->pgbench(
	'-n -c 4 -j 2 -T 3 -D k=0', 0, [qr{processed: [1-9]}], [qr{^$}],
	'4 clients generate snowflake IDs and UUIDs',
	{
		'080_each' => q{
\set k :k + 1
INSERT INTO sf VALUES (snowflake_next(), :client_id, :k * 1000, pg_backend_pid());
INSERT INTO uu VALUES (uuidv7_next(), :client_id, :k, pg_backend_pid());
INSERT INTO sf SELECT snowflake_next(), :client_id, :k * 1000 + n, pg_backend_pid() FROM generate_series(1, 20) n;
}
	});
my $counts = $node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM sf), (SELECT count(DISTINCT pid) FROM sf),
	       (SELECT count(*) FROM uu), (SELECT count(DISTINCT pid) FROM uu)});
my ($nsf, $pids, $nuu, $upids) = split /\|/, $counts;
cmp_ok($nsf, '>', 10000, "$nsf unique snowflake IDs from 4 clients");
is($pids, '4', 'snowflake IDs came from 4 backends');
cmp_ok($nuu, '>', 500, "$nuu unique UUIDs from 4 clients");
is($upids, '4', 'UUIDs came from 4 backends');
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY pid ORDER BY k) AS prev
	                      FROM sf) s WHERE prev >= id}),
	'0', 'within each backend, snowflake IDs strictly increase in call order');
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT u, lag(u) OVER (PARTITION BY pid ORDER BY k) AS prev
	                      FROM uu) s WHERE prev >= u}),
	'0', 'within each backend, UUIDs strictly increase in call order');
# The backends really ran at the same time: their ID ranges overlap.
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT pid, min(id) lo, max(id) hi FROM sf GROUP BY pid) a
	JOIN (SELECT pid, min(id) lo, max(id) hi FROM sf GROUP BY pid) b
	  ON a.pid < b.pid AND a.lo < b.hi AND b.lo < a.hi}),
	'6', 'the 4 backends generated concurrently (every pair of ID ranges overlaps)');

######## calls serialised by a lock: one global order across backends
$node->pgbench(
	'-n -c 4 -j 2 -T 2', 0, [qr{processed: [1-9]}], [qr{^$}],
	'4 clients generate under an advisory lock',
	{
		'080_locked' => q{
BEGIN;
SELECT pg_advisory_xact_lock(4242);
INSERT INTO g VALUES (nextval('gs'), snowflake_next(), uuidv7_next());
INSERT INTO g VALUES (nextval('gs'), snowflake_next(), uuidv7_next());
COMMIT;
}
	});
is( $node->safe_psql('postgres', q{
	SELECT count(*) > 100,
	       count(*) FILTER (WHERE prev_id >= id OR prev_u >= u)
	FROM (SELECT id, u, lag(id) OVER (ORDER BY seq) AS prev_id,
	             lag(u) OVER (ORDER BY seq) AS prev_u FROM g) s}),
	't|0', 'in lock order, IDs and UUIDs strictly increase across backends');

######## parallel workers (the functions are PARALLEL SAFE)
$node->safe_psql('postgres', q{
	CREATE TABLE src AS SELECT generate_series(1, 300000) AS n;
	ANALYZE src});
my $parallel_setup = q{
	SET max_parallel_workers_per_gather = 2;
	SET parallel_setup_cost = 0;
	SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0;
	SET parallel_leader_participation = off;
};
my $plan = $node->safe_psql('postgres', $parallel_setup . q{
	EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	CREATE TABLE par AS SELECT n, snowflake_next() AS id, uuidv7_next() AS u FROM src});
like($plan, qr/Workers Launched: 2/, 'the parallel query ran in 2 workers');
like($plan, qr/Parallel Seq Scan.*\n\s*Output: .*snowflake_next\(\).*uuidv7_next\(\)/,
	'the workers called the generators');
is( $node->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT id), count(DISTINCT u) FROM par}),
	'300000|300000|300000',
	'IDs and UUIDs made by parallel workers are unique');
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM par, (SELECT max(id) AS id, max(u::text) AS u FROM g) m
	WHERE par.id <= m.id OR par.u::text <= m.u}),
	'0', 'and above every ID issued before');

######## the drift bound holds under a sustained burst
# Lower the bound with a reload: backends and the keeper pick it up.
$node->safe_psql('postgres',
	"ALTER SYSTEM SET uidgen.max_clock_drift = '200ms'; SELECT pg_reload_conf()");
$node->poll_query_until('postgres', q{SELECT current_setting('uidgen.max_clock_drift') = '200ms'});
# Start from a clock that is not ahead (the parallel burst above ran it up
# to the old bound, and the clock never goes back).
$node->poll_query_until('postgres',
	q{SELECT clock_ahead < interval '5 ms' FROM uidgen_status()});
my $waits0 = uidgen_status($node)->{waits};

my $script = $node->basedir . '/080_burst.sql';
append_to_file($script,
	"SELECT max(snowflake_next()) FROM generate_series(1, 20000);\n"
	  . "SELECT count(uuidv7_next()) FROM generate_series(1, 2000);\n");
my ($out, $err) = ('', '');
my $t0 = time();
my $h = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '3', '-f', $script,
	  $node->connstr('postgres') ],
	'>', \$out, '2>', \$err);
# Sample clock_ahead every 50 ms for as long as pgbench runs (its 3 s
# start when its sessions are up, later on a loaded machine).
my ($max_ahead, $samples) = (0, 0);
while ($h->pumpable || time() - $t0 < 3.2)
{
	$h->pump_nb if $h->pumpable;
	my $a = uidgen_status($node)->{clock_ahead};
	$max_ahead = $a if $a > $max_ahead;
	$samples++;
	usleep(50_000);
}
ok($h->finish, 'burst clients ran without error') or diag($err);
my $st = uidgen_status($node);
$max_ahead = $st->{clock_ahead} if $st->{clock_ahead} > $max_ahead;
cmp_ok($st->{waits}, '>', $waits0, 'precondition: the burst outran the clock (calls waited)');
cmp_ok($max_ahead, '>', 0.1, "precondition: the clock ran ahead ($max_ahead s)");
cmp_ok($max_ahead, '<=', 0.2 + 0.005,
	"clock_ahead never exceeded max_clock_drift = 200ms (max $max_ahead s in $samples samples)");
# The last IDs are within the bound of the time they were made.
is( $node->safe_psql('postgres', q{
	SELECT snowflake_timestamp(snowflake_next()) <= clock_timestamp() + interval '205 ms'}),
	't', 'a new ID is within max_clock_drift of the wall clock');

######## UUIDs keep their own clock: a snowflake burst does not move them
# One statement runs the snowflake clock to the bound (50,000 IDs at 64 per
# ms are 780 ms of clock), then takes UUIDs: their timestamps stay at the
# wall clock (the millisecond of the call, or the next one).
my $uuid_gap = $node->safe_psql('postgres', q{
	WITH burst AS MATERIALIZED (SELECT max(snowflake_next()) AS id FROM generate_series(1, 50000))
	SELECT snowflake_timestamp(id) - clock_timestamp() > interval '100 ms',
	       max(extract(epoch FROM uuidv7_timestamp(u) - t))
	FROM burst, LATERAL (SELECT uuidv7_next() AS u, clock_timestamp() AS t
	                     FROM generate_series(1, 100) WHERE burst.id > 0) us
	GROUP BY 1});
my ($ahead_sf, $gap) = split /\|/, $uuid_gap;
is($ahead_sf, 't', 'precondition: the snowflake burst ran its clock ahead');
cmp_ok($gap, '<', 0.002, 'UUIDs taken right after it are at the wall clock')
  or diag("UUIDs up to $gap s ahead");

$node->stop;
done_testing();
