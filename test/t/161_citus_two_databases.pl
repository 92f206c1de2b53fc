# Guarantee (found by review): the worker id adopted from Citus is server-wide, but the
# group id it comes from is per database.  A server that is a worker (group
# 1) of the Citus cluster in one database and the coordinator (group 0) of
# another Citus cluster in a second database flips the adopted worker id
# between 1 and 0; a backend of the first database that has already checked
# its group (group_checked) then generates under worker id 0: the id of its
# cluster's coordinator, which nobody chose for this node.  Its IDs can
# repeat the coordinator's.  Every ID generated in a database must carry
# that database's group id (or be refused).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
plan skip_all => "Citus is not installed in $libdir"
  unless -f "$libdir/citus.so";


my $coord = citus_node('co');
my $w = citus_node('w1');
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ')');
my $nodeid = $coord->safe_psql('postgres',
	"SELECT citus_add_node('" . $w->host . "', " . $w->port . ')');
my $group = $coord->safe_psql('postgres',
	"SELECT groupid FROM pg_dist_node WHERE nodeid = $nodeid");
ok($group > 0, "the worker is in group $group");
$coord->safe_psql('postgres', 'CREATE EXTENSION uidgen');
is($w->safe_psql('postgres', 'SELECT snowflake_worker(snowflake_next())'),
	$group, 'the worker generates under its group id');
is($coord->safe_psql('postgres', 'SELECT snowflake_worker(snowflake_next())'),
	'0', 'the coordinator generates under 0');

# A backend of the worker's cluster database that lives on.
my $bg = $w->background_psql('postgres');
# (BackgroundPsql of 16.2 and older leaves the newline on the answer)
sub bg_query
{
	my ($sql) = @_;
	my $v = $bg->query_safe($sql);
	chomp $v;
	return $v;
}
is(bg_query('SELECT snowflake_worker(snowflake_next())'),
	$group, 'the long-lived backend: the group id');

# A second database on the worker's server: the coordinator of its own cluster.
$w->safe_psql('postgres', 'CREATE DATABASE other');
$w->safe_psql('other', 'CREATE EXTENSION citus');
$w->safe_psql('other',
	"SELECT citus_set_coordinator_host('" . $w->host . "', " . $w->port . ')');
$w->safe_psql('other', 'CREATE EXTENSION IF NOT EXISTS uidgen');
my ($out, $err) = ('', '');
my $ret = $w->psql('other', 'SELECT snowflake_worker(snowflake_next())',
	stdout => \$out, stderr => \$err);
note("database other: ret $ret out '$out' err '$err'");

# Back in the worker's cluster database: still its group id, or a refusal.
my $seen = eval { bg_query('SELECT snowflake_worker(snowflake_next())') };
my $bgerr = $@;
ok(defined $seen ? $seen eq $group : $bgerr =~ /ERROR/,
	"the long-lived backend of the cluster database never generates under another worker id (got "
	  . ($seen // "error: $bgerr") . ", the coordinator's is 0)");
my $fresh = eval { $w->safe_psql('postgres', 'SELECT snowflake_worker(snowflake_next())') };
ok(!defined $fresh || $fresh eq $group,
	'a new backend of the cluster database: its group id or a refusal ('
	  . ($fresh // 'error') . ')');
$bg->quit;

done_testing();
