# Guarantee: in a Citus cluster (a coordinator and two workers, on this
# machine) no node generates snowflake IDs under a worker id nobody chose.
# With nothing configured for uidgen, every node refuses snowflake_next()
# (SQLSTATE 55000) wherever Citus evaluates the column default: on the
# coordinator, on a worker a client is connected to, and on the workers in
# a pushed-down INSERT ... SELECT; no row goes in, so none repeats (0.2.0
# gave 78,657 duplicates in 400,000 rows, every node as worker 0).  With a
# distinct uidgen.worker_id per node, IDs from all of those paths, and from
# clients on every node at once, are distinct.
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

# A node with Citus and uidgen preloaded, and no uidgen.worker_id.
sub citus_node
{
	my ($name) = @_;
	my $node = uidgen_node($name, start => 0, 'uidgen.worker_id' => undef,
		shared_preload_libraries => 'citus,uidgen',
		'citus.node_conninfo' => 'sslmode=disable',
		'citus.shard_count' => 4,
		max_prepared_transactions => 20,
		max_connections => 60);
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

my $coord = citus_node('co');
my @workers = map { citus_node("w$_") } 1 .. 2;
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ')');
$coord->safe_psql('postgres',
	"SELECT citus_add_node('" . $_->host . "', " . $_->port . ')')
  for @workers;
# (propagated to the workers by Citus)
$coord->safe_psql('postgres', q{
	CREATE EXTENSION uidgen;
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
	'pushed-down INSERT ... SELECT' =>
	  q{INSERT INTO t (k, node) SELECT k, 'p' FROM src});

# 1. Nothing configured: refused on every node and path.
for my $node ($coord, @workers)
{
	my $st = uidgen_status($node);
	is("$st->{state}|$st->{worker_id}", 'no worker id|',
		$node->name . ': uidgen_status() says no worker id');
	for my $path (sort keys %paths)
	{
		like(psql_error($node, $paths{$path}),
			qr/ERROR:\s+55000:\s+uidgen\.worker_id is not set/,
			$node->name . ": $path refused (55000)");
	}
}
is($coord->safe_psql('postgres', 'SELECT count(*) FROM t'), '0',
	'no row went in: nothing repeated');

# 2. A distinct worker id per node: distinct IDs on every path, and from
# clients on all three nodes at once.
my $id = 1;
for my $node ($coord, @workers)
{
	$node->append_conf('postgresql.conf', 'uidgen.worker_id = ' . $id++ . "\n");
	$node->restart;
}
for my $node ($coord, @workers)
{
	for my $path ('INSERT ... VALUES', 'INSERT ... SELECT from generate_series')
	{
		$node->safe_psql('postgres', $paths{$path});
	}
}
$coord->safe_psql('postgres', $paths{'pushed-down INSERT ... SELECT'});
my $burst = q{INSERT INTO t (k, node) SELECT g, 'c' FROM generate_series(1, 200) g;} . "\n";
my @clients = map { start_clients($_, ($burst x 10) x 2) } ($coord, @workers);
stop_clients($_) for @clients;
is(join('', map { client_errors($_) } @clients), '',
	'two clients on each node at once: no error');
my ($rows, $distinct, $workers_seen) = split /\|/, $coord->safe_psql('postgres',
	q{SELECT count(*), count(DISTINCT id), count(DISTINCT snowflake_worker(id)) FROM t});
cmp_ok($rows, '>', 6000, "rows from every node and path ($rows)");
is($distinct, $rows, 'every ID distinct');
is($workers_seen, '3', 'IDs carry the three worker ids');
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(DISTINCT snowflake_worker(id)::text, ',') FROM t WHERE node = 'p'}),
	'2,3', 'the pushed-down INSERT ... SELECT evaluated the default on the workers');

$_->stop for ($coord, @workers);
done_testing();
