# Guarantee: pg_upgrade, which copies relations but not uidgen.state, does
# not make the new cluster repeat the old cluster's IDs.  The old cluster
# issues IDs, is upgraded, and the new cluster starts with its wall clock an
# hour behind: every snowflake ID and UUIDv7 it issues is above the old
# ones, at once (no wait for the clock).  While pg_upgrade runs the server
# in binary-upgrade mode, uidgen starts no keeper and issues no ID.  When
# no mark is handed over during the run (the old cluster without uidgen
# preloaded; a stale hand-off file from an earlier run and the new cluster's
# own state file do not count), the new cluster refuses to generate, with
# SQLSTATE 55000, across settings changes and restarts, until the old state
# file is copied in.  A new cluster without uidgen preloaded makes
# pg_upgrade stop.
#
# Needs an older PostgreSQL major with uidgen installed:
# UIDGEN_UPGRADE_FROM is its installation directory (for instance
# /usr/lib/postgresql/18); scripts/matrix.sh sets it for 19.
use strict;
use warnings;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

my $from = $ENV{UIDGEN_UPGRADE_FROM};
plan skip_all => 'UIDGEN_UPGRADE_FROM (an older major to upgrade from) is not set'
  unless $from;
plan skip_all => 'libfaketime is not installed' unless faketime_available();

# The old cluster: uidgen preloaded, IDs issued and kept in a table (which
# pg_upgrade copies, so the new cluster can compare against them).
my $old = PostgreSQL::Test::Cluster->new('old', install_path => $from);
# An older major only (15's pg_upgrade, the oldest, has no --copy either).
my $this_major = PostgreSQL::Test::Cluster->new('probe')->pg_version->major;
plan skip_all => "UIDGEN_UPGRADE_FROM ($from, PostgreSQL "
  . $old->pg_version->major
  . ") is not an older major than the one under test ($this_major)"
  unless $old->pg_version->major < $this_major;
$old->init;
$old->append_conf('postgresql.conf', "shared_preload_libraries = 'uidgen'\nuidgen.worker_id = 0\n");
$old->start;
$old->safe_psql('postgres', q{
	CREATE EXTENSION uidgen;
	CREATE TABLE old_ids AS SELECT snowflake_next() AS id, uuidv7_next() AS u
	FROM generate_series(1, 100000)});
my ($old_id, $old_u) = split /\|/, $old->safe_psql('postgres',
	'SELECT max(id), max(u::text) FROM old_ids');
$old->stop;

# Upgrade $old into a new node of this major; returns the node.  Options:
# preload => 0 leaves uidgen out of the new node's shared_preload_libraries
# (and expects pg_upgrade to fail); pre_start => 1 starts the new node
# normally once before the upgrade, so that it has a state file of its own.
sub upgrade
{
	my ($name, $sockdir, %opt) = @_;
	my $preload = $opt{preload} // 1;
	my $new = PostgreSQL::Test::Cluster->new($name);
	$new->init;
	$new->append_conf('postgresql.conf', "shared_preload_libraries = 'uidgen'\nuidgen.worker_id = 0\n")
	  if $preload;
	if ($opt{pre_start})
	{
		$new->start;
		$new->stop;
		ok(-f $new->data_dir . '/uidgen.state', "$name has a state file of its own");
	}
	my @cmd = (
		'pg_upgrade', '--no-sync',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', $old->config_data('--bindir'),
		'-B', $new->config_data('--bindir'),
		'-s', $sockdir, '-p', $old->port, '-P', $new->port, '--copy');
	if ($preload)
	{
		command_ok(\@cmd, "pg_upgrade from $from to $name");
	}
	else
	{
		command_fails(\@cmd, "pg_upgrade to $name without uidgen preloaded fails");
	}
	return $new;
}

my $new = upgrade('new', $old->host);
ok(-f $new->data_dir . '/uidgen.state',
	'pg_upgrade left the new cluster a state file');

# Binary-upgrade mode, as pg_upgrade runs the server: no keeper, no IDs.
command_ok(
	[
		'pg_ctl', '-D', $new->data_dir, '-l', $new->logfile, '-w',
		'-o', '-b', 'start'
	],
	'the new cluster starts in binary-upgrade mode');
is( $new->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'uidgen%'"),
	'0', 'no uidgen worker runs in binary-upgrade mode');
my $err = psql_error($new, 'SELECT snowflake_next()');
like($err, qr/55000: uidgen does not generate IDs in binary-upgrade mode/,
	'no snowflake ID in binary-upgrade mode');
$err = psql_error($new, 'SELECT uuidv7_next()');
like($err, qr/55000: uidgen does not generate IDs in binary-upgrade mode/,
	'no UUIDv7 in binary-upgrade mode');
command_ok([ 'pg_ctl', '-D', $new->data_dir, '-w', '-m', 'fast', 'stop' ],
	'binary-upgrade mode stopped');

# The new cluster runs an hour behind the old one's clock.
my $fake = $new->basedir . '/faketime';
faketime_set($fake, '-3600');
start_faked($new, $fake);
my $lag = $new->safe_psql('postgres',
	'SELECT extract(epoch FROM clock_timestamp())') - time();
cmp_ok(abs($lag + 3600), '<', 10, "the new cluster's clock is an hour behind (${lag}s)");

my $t0 = time();
my ($min_id, $first_u) = split /\|/, $new->safe_psql('postgres', q{
	CREATE TABLE new_ids AS SELECT n, snowflake_next() AS id, uuidv7_next() AS u
	FROM generate_series(1, 50000) n;
	SELECT min(id), (SELECT u FROM new_ids ORDER BY n LIMIT 1) FROM new_ids});
my $elapsed = time() - $t0;
ok($min_id > $old_id, 'every snowflake ID after pg_upgrade is above the old cluster\'s')
  or diag("new min $min_id, old max $old_id");
ok($first_u gt $old_u, 'the first UUIDv7 after pg_upgrade is above the old cluster\'s')
  or diag("new $first_u, old max $old_u");
is( $new->safe_psql('postgres', q{
	SELECT count(*) FROM new_ids
	WHERE id IN (SELECT id FROM old_ids) OR u IN (SELECT u FROM old_ids)}),
	'0', 'no ID of the old cluster is issued again');
cmp_ok($elapsed, '<', 60, "50000 IDs took ${elapsed}s: no wait for the clock");
is(uidgen_status($new)->{waits}, '0', 'no call waited for real time');
is(uidgen_status($new)->{state}, 'ok', 'state is ok');
$new->stop;

# The old cluster hands nothing over (here: uidgen not preloaded there while
# pg_upgrade runs), although the socket directory holds a stale hand-off
# file from an earlier run and the new cluster has a state file of its own
# (it was started once before the upgrade): the new cluster cannot know
# what the old one issued, and refuses to generate.
my $sock2 = PostgreSQL::Test::Utils::tempdir_short();
copy($old->host . '/uidgen.upgrade', "$sock2/uidgen.upgrade") or die "copy: $!";
utime(time() - 3600, time() - 3600, "$sock2/uidgen.upgrade");
$old->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
my $lost = upgrade('lost', $sock2, pre_start => 1);
$lost->start;
is(uidgen_status($lost)->{state}, 'upgraded without state',
	'uidgen_status() says the upgrade brought no state');
$err = psql_error($lost, 'SELECT snowflake_next()');
like($err, qr/55000: uidgen does not know the high-water mark of the cluster this one was upgraded from/,
	'snowflake_next() refuses after an upgrade without a mark');
like($err, qr/copy the file "uidgen.state" from the old cluster's data directory/,
	'the hint says what to do');
$err = psql_error($lost, 'SELECT uuidv7_next()');
like($err, qr/55000: uidgen does not know the high-water mark/,
	'uuidv7_next() refuses too');

# Changing a setting that shapes IDs unsafely (a later epoch would be
# refused on its own, as "settings changed", which leaves uuidv7_next()
# working), and restarting twice, keeps refusing both.
$lost->append_conf('postgresql.conf', "uidgen.epoch = '2025-01-01 00:00:00+00'\n");
$lost->restart;
$lost->restart;
is(uidgen_status($lost)->{state}, 'upgraded without state',
	'after a settings change and two restarts: still upgraded without state');
$err = psql_error($lost, 'SELECT uuidv7_next()');
like($err, qr/55000: uidgen does not know the high-water mark/,
	'uuidv7_next() still refuses');
$lost->stop;

# Following the hint: the old state file makes it generate above the old IDs.
$lost->append_conf('postgresql.conf', "uidgen.epoch = '2024-01-01 00:00:00+00'\n");
copy($old->data_dir . '/uidgen.state', $lost->data_dir . '/uidgen.state')
  or die "copy: $!";
$lost->start;
# (another cluster's state file: a copy, with its worker id, until taken over)
is(uidgen_status($lost)->{copy_reason}, 'system identifier',
	'with the old state file, the new cluster is a copy of the old one');
$lost->safe_psql('postgres', 'SELECT uidgen_take_over()');
is(uidgen_status($lost)->{state}, 'ok', 'with the old state file and a take-over, state is ok');
my $id = $lost->safe_psql('postgres', 'SELECT snowflake_next()');
ok($id > $old_id, 'and IDs are above the old cluster\'s');
$lost->stop;

# A new cluster without uidgen preloaded could not take the mark over:
# pg_upgrade's check of the old cluster's libraries stops, saying why.
my $unloaded = upgrade('unloaded', PostgreSQL::Test::Utils::tempdir_short(), preload => 0);
my @reports = glob($unloaded->data_dir . '/pg_upgrade_output.d/*/loadable_libraries.txt');
like(@reports ? slurp_file($reports[0]) : '',
	qr/uidgen must be in "shared_preload_libraries" of both clusters when pg_upgrade runs/,
	'the new cluster refuses to load uidgen late, with the reason');

done_testing();
