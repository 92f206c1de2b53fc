# Guarantee: the adoption of a Citus group id as worker id
# (statefile_adopt_worker(), clock/statefile.c) is durable before it is
# used, at each of its crash points on a worker whose group changes
# (removed and added again):
# - "adopt-before-file": an error there leaves the old worker id in force
#   (nothing published before the state file); a kill -9 there leaves the
#   old state file, and after the restart the node adopts the new group at
#   its next ID, above every ID it issued;
# - "adopt-after-wal": the mark record under the new worker id is flushed
#   before the adoption is used: the worker's standby has replayed it (its
#   origin worker id is the new group) while the backend is held there;
#   killed there, the node comes back with the new worker id, above every
#   ID it issued.
# ("adopt-after-file" is in test/t/160_citus.pl.)  Needs Citus
# (scripts/citus.sh); skipped without.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
plan skip_all => "Citus is not installed in $libdir (scripts/citus.sh builds it)"
  unless -f "$libdir/citus.so";


my $coord = citus_node('co');
my $w = citus_node('w1', init => { allows_streaming => 1 });
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ')');

# Add $w to the cluster (again): its new group id.
sub add_worker
{
	$coord->safe_psql('postgres',
		"SELECT citus_remove_node('" . $w->host . "', " . $w->port . ')')
	  if $coord->safe_psql('postgres', 'SELECT count(*) FROM pg_dist_node WHERE groupid > 0');
	my $nodeid = $coord->safe_psql('postgres',
		"SELECT citus_add_node('" . $w->host . "', " . $w->port . ')');
	return $coord->safe_psql('postgres', "SELECT groupid FROM pg_dist_node WHERE nodeid = $nodeid");
}

# $n IDs from $w; all IDs it issued are kept in @issued.
my @issued;
sub ids
{
	my ($n) = @_;
	my @ids = split /\n/, $w->safe_psql('postgres',
		"SELECT snowflake_next() FROM generate_series(1, $n)");
	push @issued, @ids;
	return @ids;
}

# The worker id and its source in $w's uidgen_status().
sub worker_of
{
	my $st = uidgen_status($w);
	return "$st->{worker_id}|$st->{worker_id_source}";
}

my $g1 = add_worker();
$coord->safe_psql('postgres', 'CREATE EXTENSION uidgen');
ids(1000);
is(worker_of(), "$g1|citus", "the worker adopted its group id $g1");
$w->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('w1s');
$standby->init_from_backup($w, 'b', has_streaming => 1);
$standby->start;

# 1. "adopt-before-file", error: nothing adopted.
my $g2 = add_worker();
isnt($g2, $g1, "added again: a new group ($g2)");
arm_crash_point($w, 'adopt-before-file', 'error');
like(psql_error($w, 'SELECT snowflake_next()'),
	qr/ERROR:\s+XX000:\s+uidgen crash point "adopt-before-file"/,
	'an error before the state file is written: the call fails');
is(worker_of(), "$g1|citus", 'and the old worker id is still in force');

# 2. "adopt-before-file", kill -9: the old state file; the next ID adopts.
arm_crash_point($w, 'adopt-before-file', 'kill');
$w->psql('postgres', 'SELECT snowflake_next()');
ok(wait_for_server_exit($w), 'killed before the state file took the new group id');
disarm_crash_point($w);
$w->start;
is(worker_of(), "$g1|citus", 'after the restart: the old worker id, from the old state file');
my @after = ids(1000);
is($w->safe_psql('postgres', "SELECT snowflake_worker($after[0])"), $g2,
	"the next ID adopts group $g2");
cmp_ok($after[0], '>', max_snowflake(@issued[0 .. $#issued - 1000]),
	'above every ID issued before the crash');

# 3. "adopt-after-wal", held there: the standby has the mark record under
# the new worker id before any ID goes out under it.
my $g3 = add_worker();
arm_crash_point($w, 'adopt-after-wal', 'wait');
my $offset = -s $w->logfile;
my ($out, $err) = ('', '');
my $held = IPC::Run::start([ 'psql', '-XAtq', '-d', $w->connstr('postgres'), '-c',
		'SELECT snowflake_next()' ], '>', \$out, '2>', \$err);
ok(wait_for_log($w, qr/uidgen crash point "adopt-after-wal" reached/, $offset),
	'a backend is held after the mark record was flushed');
my ($pid) = slurp_file($w->logfile, $offset) =~
  /\[(\d+)\][^\n]*uidgen crash point "adopt-after-wal" reached/;
$w->wait_for_catchup($standby, 'replay', $w->lsn('flush'));
is(uidgen_status($standby)->{origin_worker_id}, $g3,
	"the standby replayed the mark record under group $g3");
is($out, '', 'no ID went out under it yet');

# Killed there: the new worker id holds, above everything issued.
kill 'KILL', $pid;
$held->finish;
ok(wait_for_server_exit($w), 'killed after the mark record');
disarm_crash_point($w);
$w->start;
is(worker_of(), "$g3|citus", "after the restart: group $g3, from the state file");
my @last = ids(1000);
is($w->safe_psql('postgres', "SELECT snowflake_worker($last[0])"), $g3,
	"IDs under group $g3");
cmp_ok($last[0], '>', max_snowflake(@issued[0 .. $#issued - 1000]),
	'above every ID issued before');
my %seen;
is(scalar(grep { $seen{$_}++ } @issued), 0, 'no ID twice');

$_->stop for ($coord, $w, $standby);
done_testing();
