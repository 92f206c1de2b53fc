# Guarantee: in a Citus cluster (a coordinator and workers, on this
# machine) every node generates snowflake IDs under a worker id of its own
# with nothing configured for uidgen, and no node generates under a worker
# id nobody chose.  A node with no uidgen.worker_id and no registry adopts
# its Citus group id, durably, before its first ID (replicas/citus.c); a
# node Citus has not placed refuses (SQLSTATE 55000), never generating as
# the coordinator, whose group id (0) it shares.  IDs are distinct wherever
# Citus evaluates the column default: on the coordinator, on a worker a
# client is connected to, on the workers in a pushed-down INSERT ... SELECT,
# and from clients on every node at once (0.2.0 gave 78,657 duplicates in
# 400,000 rows, every node as worker 0).  Also: a node added later gets its
# own id; the adopted id survives kill -9 (also at the adoption's crash
# point) and holds in databases without citus; a node removed and added
# again (a new group) adopts the new id, above every ID it issued; a group
# id beyond uidgen.worker_bits is refused, naming the registry; two nodes
# forced to one worker id are listed by uidgen_citus_check() and refuse; a
# worker's standby, promoted, keeps the group's id under the promotion rules
# (a copy: refused until uidgen_take_over()).  The `sql citus` examples of
# docs/citus.md run here, on the coordinator.
#
# Needs Citus, which is not in Debian: scripts/citus.sh builds it from the
# archives in UIDGEN_CITUS_DIR (scripts/test.sh runs it); skipped without.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
plan skip_all => "Citus is not installed in $libdir (scripts/citus.sh builds it)"
  unless -f "$libdir/citus.so";


# Add $node to the cluster of $coord; its group id.
sub add_node
{
	my ($coord, $node) = @_;
	my $nodeid = $coord->safe_psql('postgres',
		"SELECT citus_add_node('" . $node->host . "', " . $node->port . ')');
	return $coord->safe_psql('postgres',
		"SELECT groupid FROM pg_dist_node WHERE nodeid = $nodeid");
}

# $n IDs from $node's database $db.
sub ids_from
{
	my ($node, $n, $db) = @_;
	return split /\n/, $node->safe_psql($db // 'postgres',
		"SELECT snowflake_next() FROM generate_series(1, $n)");
}

my $coord = citus_node('co');
my @workers = (citus_node('w1', init => { allows_streaming => 1 }), citus_node('w2'));
my $late = citus_node('w3');

# 1. Not placed yet: every node says group 0, like the coordinator; none
# generates.
$_->safe_psql('postgres', 'CREATE EXTENSION uidgen') for ($coord, $late);
for my $node ($coord, $late)
{
	like(psql_error($node, 'SELECT snowflake_next()'),
		qr/ERROR:\s+55000:\s+this node is not placed in a citus cluster yet/,
		$node->name . ': not placed yet: refused (55000), not generating as the coordinator');
	is(uidgen_status($node)->{state}, 'no worker id',
		$node->name . ': uidgen_status() says no worker id');
}
$coord->safe_psql('postgres', 'CREATE DATABASE plain');
$coord->safe_psql('plain', 'CREATE EXTENSION uidgen');
my $plain_err = '';
$coord->psql('plain', 'SELECT snowflake_next()', stderr => \$plain_err,
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($plain_err,
	qr/ERROR:\s+55000:\s+uidgen\.worker_id is not set/,
	'a database without citus on a server with no adopted id: refused as before');

# 2. Placed: nothing configured for uidgen.
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ')');
my @groups = map { add_node($coord, $_) } @workers;
is(join(',', @groups), '1,2', 'the workers are in groups 1 and 2');
# (propagated to the workers by Citus)
$coord->safe_psql('postgres', q{
	CREATE TABLE t (id bigint DEFAULT snowflake_next(), k int, node text);
	SELECT create_distributed_table('t', 'k');
	CREATE TABLE src (k int);
	SELECT create_distributed_table('src', 'k', colocate_with => 't');
	INSERT INTO src SELECT generate_series(1, 1000);
});
is( $workers[1]->safe_psql('postgres',
		q{SELECT extversion FROM pg_extension WHERE extname = 'uidgen'}),
	$coord->safe_psql('postgres',
		q{SELECT extversion FROM pg_extension WHERE extname = 'uidgen'}),
	'CREATE EXTENSION uidgen is propagated to the workers');

# The paths on which Citus evaluates a column default, from $node.
my %paths = (
	'INSERT ... VALUES' => q{INSERT INTO t (k, node) VALUES (1, 'v'), (2, 'v')},
	'INSERT ... SELECT from generate_series' =>
	  q{INSERT INTO t (k, node) SELECT g, 's' FROM generate_series(1, 1000) g},
	'COPY' => q{COPY t (k, node) FROM PROGRAM 'seq 1 500 | sed s/$/,c/' WITH (FORMAT csv)});
for my $node ($coord, @workers)
{
	$node->safe_psql('postgres', $paths{$_}) for sort keys %paths;
}
$coord->safe_psql('postgres', q{INSERT INTO t (k, node) SELECT k, 'p' FROM src});
my $burst = q{INSERT INTO t (k, node) SELECT g, 'b' FROM generate_series(1, 200) g;} . "\n";
my @clients = map { start_clients($_, ($burst x 10) x 2) } ($coord, @workers);
stop_clients($_) for @clients;
is(join('', map { client_errors($_) } @clients), '',
	'two clients on each node at once: no error');
my ($rows, $distinct, $workers_seen) = split /\|/, $coord->safe_psql('postgres',
	q{SELECT count(*), count(DISTINCT id), count(DISTINCT snowflake_worker(id)) FROM t});
cmp_ok($rows, '>', 10000, "rows from every node and path ($rows)");
is($distinct, $rows, 'nothing configured: every ID distinct');
is($workers_seen, '3', 'IDs carry the three group ids');
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(DISTINCT snowflake_worker(id)::text, ',') FROM t WHERE node = 'p'}),
	'1,2', 'the pushed-down INSERT ... SELECT evaluated the default on the workers');
for my $node ($coord, @workers)
{
	my $st = uidgen_status($node);
	is("$st->{state}|$st->{worker_id}|$st->{worker_id_source}",
		'ok|' . ($node == $coord ? 0 : $node == $workers[0] ? 1 : 2) . '|citus',
		$node->name . ': uidgen_status() shows the adopted group id, source citus');
}
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(worker_id || ':' || source || ':' || conflict, ',' ORDER BY worker_id)
		  FROM uidgen_citus_check()}),
	'0:citus:false,1:citus:false,2:citus:false',
	'uidgen_citus_check() lists every node, no conflict');
# The `sql citus` examples of docs/citus.md, in order, on the coordinator.
my @blocks = slurp_file('docs/citus.md') =~ /^```sql citus\n(.*?)^```$/msg;
cmp_ok(scalar(@blocks), '>=', 3, 'docs/citus.md has sql citus examples');
my $n = 0;
for my $block (@blocks)
{
	$n++;
	my ($ret, $out, $err) = $coord->psql('postgres', $block, on_error_stop => 1);
	is("$ret|$err", '0|', "docs/citus.md example $n runs");
}


# The adopted id is server-wide: a database without citus generates under it.
cmp_ok(scalar(grep { $coord->safe_psql('postgres', "SELECT snowflake_worker($_)") == 0 }
		ids_from($coord, 3, 'plain')), '==', 3,
	'a database without citus generates under the adopted id');

# 3. A node added later gets its own group id; the adoption is durable
# before its first ID (kill -9 at the crash point, after the file).
is(add_node($coord, $late), '3', 'the node added later is in group 3');
arm_crash_point($late, 'adopt-after-file', 'kill');
$late->psql('postgres', 'SELECT snowflake_next()');
wait_for_server_exit($late) or die 'w3 did not go down at the crash point';
disarm_crash_point($late);
$late->start;
my $st = uidgen_status($late);
is("$st->{worker_id}|$st->{worker_id_source}", '3|citus',
	'killed right after the state file took the adopted id: still adopted after the crash');
my @late_before = ids_from($late, 100);
is(scalar(grep { $late->safe_psql('postgres', "SELECT snowflake_worker($_)") == 3 } @late_before[0, -1]),
	2, 'the node added later generates as worker 3');

# kill -9 after IDs were issued: the adopted id and the mark hold.
my @w1_before = ids_from($workers[0], 100);
kill9_and_wait($workers[0]);
$workers[0]->start;
$st = uidgen_status($workers[0]);
is("$st->{worker_id}|$st->{worker_id_source}", '1|citus',
	'after kill -9, the adopted id holds before any citus database is read');
my @w1_after = ids_from($workers[0], 100);
cmp_ok($w1_after[0], '>', max_snowflake(@w1_before), 'after kill -9: IDs above those issued before');

# 4. Removed and added again: a new group, adopted above every ID issued.
$coord->safe_psql('postgres',
	"SELECT citus_remove_node('" . $late->host . "', " . $late->port . ')');
is(add_node($coord, $late), '4', 'added again: group 4');
my @late_after = ids_from($late, 100);
is(scalar(grep { $late->safe_psql('postgres', "SELECT snowflake_worker($_)") == 4 } @late_after[0, -1]),
	2, 're-added: the node adopts its new group id');
cmp_ok($late_after[0], '>', max_snowflake(@late_before), 're-added: IDs above those issued before');
like(slurp_file($late->logfile), qr/uidgen adopted worker id 4, this node's citus group id/,
	'the new adoption is logged');

# A group id beyond the worker bits: refused, naming the registry.
my $narrow = uidgen_node('w5', start => 0, 'uidgen.worker_id' => undef,
	shared_preload_libraries => 'citus,uidgen',
	'citus.node_conninfo' => 'sslmode=disable',
	'uidgen.worker_bits' => 2,
	max_prepared_transactions => 20,
	max_connections => 60);
$narrow->start;
$narrow->safe_psql('postgres', 'CREATE EXTENSION citus');
is(add_node($coord, $narrow), '5', 'a node in group 5');
like(psql_error($narrow, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000:\s+citus group id 5 does not fit in 2 worker bits.*HINT:\s+Lease worker ids from a registry/s,
	'group id 5 in 2 worker bits: refused, naming the registry');
$coord->safe_psql('postgres',
	"SELECT citus_remove_node('" . $narrow->host . "', " . $narrow->port . ')');
$narrow->stop;

# 5. Two nodes forced to one worker id: listed and refused.
$workers[1]->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$workers[1]->restart;
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(worker_id || ':' || source || ':' || conflict, ',' ORDER BY worker_id, source)
		  FROM uidgen_citus_check()}),
	'0:citus:false,1:citus:true,1:setting:true,4:citus:false',
	'uidgen_citus_check() lists both nodes with worker id 1 as a conflict');
for my $node (@workers)
{
	like(psql_error($node, 'SELECT snowflake_next()'),
		qr/ERROR:\s+55000:\s+worker id 1 is also used by another node of the citus cluster/,
		$node->name . ': the conflicting node refuses');
	is(uidgen_status($node)->{state}, 'worker id conflict',
		$node->name . ': uidgen_status() says worker id conflict');
}
ids_from($coord, 1);
pass('the other nodes go on');
# The refusal is durable; the way out (docs/citus.md): distinct worker
# ids, then the check again, which lifts it.
$workers[1]->append_conf('postgresql.conf', "uidgen.worker_id = 2\n");
$workers[1]->restart;
is( $coord->safe_psql('postgres',
		q{SELECT count(*) FILTER (WHERE conflict) FROM uidgen_citus_check()}),
	'0', 'w2 given a worker id of its own, the check again: no conflict');
ids_from($workers[0], 1);
pass('w1 generates again');

# 6. A worker's standby, promoted: the group's id, under the promotion
# rules (a copy with its origin's worker id refuses until a take-over).
$workers[0]->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('w1s');
$standby->init_from_backup($workers[0], 'b', has_streaming => 1);
$standby->start;
$workers[0]->wait_for_catchup($standby);
$workers[0]->stop;
$standby->promote;
like(psql_error($standby, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000:/, 'the promoted standby of worker 1 refuses: a copy with its origin\'s id');
$standby->safe_psql('postgres', 'SELECT uidgen_take_over()');
my @promoted = ids_from($standby, 10);
$st = uidgen_status($standby);
is("$st->{worker_id}|$st->{worker_id_source}", '1|citus',
	'after uidgen_take_over(), the promoted standby generates under the group id');
cmp_ok($promoted[0], '>', max_snowflake(@w1_after), 'above every ID its primary issued');

$_->stop for ($coord, $workers[1], $late, $standby);
done_testing();
