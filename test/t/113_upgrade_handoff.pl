# Guarantee: the hand-off of the high-water mark across pg_upgrade
# (replicas/upgrade.c) on every major, pg_upgrade's two binary-upgrade
# starts made by hand (postgres -b, as pg_upgrade starts both clusters, with
# pg_upgrade_output.d in the new one): the old cluster writes its state to
# uidgen.upgrade in the socket directory; the new cluster takes the higher
# of that mark and its own, so that its first IDs are above both clusters';
# a corrupt hand-off file stops the new cluster's start (naming the file, hinting to remove it) and leaves its state file as it
# was; a hand-off file older than this run, or a symbolic link in its place,
# is not taken: the new cluster refuses to generate (55000) until the old
# state file is supplied.  uidgen loaded in binary-upgrade mode other than
# at start-up refuses to load.  (test/t/110_pg_upgrade.pl runs pg_upgrade
# itself, where an older major is installed.)
use strict;
use warnings;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

# 4 sequence bits and a 20 s drift bound: a burst runs a clock seconds ahead.
my %conf = ('uidgen.worker_id' => 0, 'uidgen.sequence_bits' => 4,
	'uidgen.max_clock_drift' => 20000);
my %layout = (sequence_bits => 4);

# Start $node as pg_upgrade does (binary-upgrade mode); true if it started.
sub start_binary_upgrade
{
	my ($node) = @_;
	my $ok = system('pg_ctl', '-D', $node->data_dir, '-l', $node->logfile, '-w',
		'-o', '-b', 'start') == 0;
	$node->_update_pid($ok ? 1 : -1);
	return $ok;
}

# The largest of $n snowflake IDs from $node.
sub burst
{
	my ($node, $n) = @_;
	return $node->safe_psql('postgres', "SELECT max(snowflake_next()) FROM generate_series(1, $n)");
}

# The old cluster issues IDs, its clock pushed ahead, and stops.
my $old = uidgen_node('old', %conf);
my $old_max = burst($old, 100000);
$old->stop;
my $handoff = $old->host . '/uidgen.upgrade';
unlink $handoff;

# 1. pg_upgrade's start of the old cluster: it hands its state over.
my $offset = -s $old->logfile;
ok(start_binary_upgrade($old), 'the old cluster starts in binary-upgrade mode');
ok(-f $handoff, 'it wrote the hand-off file in the socket directory');
like(slurp_file($old->logfile, $offset),
	qr/uidgen handed its high-water mark over to pg_upgrade in "\Q$handoff\E"/,
	'and logged where');
$old->stop;

# 2. The new cluster, whose own clock also ran ahead (later, so its mark is
# the higher one): it keeps its own mark, with the old cluster's settings.
my $new = uidgen_node('new', %conf);
my $new_max = burst($new, 300000);
$new->stop;
cmp_ok($new_max, '>', $old_max, 'the new cluster\'s own IDs are the later ones');
mkdir $new->data_dir . '/pg_upgrade_output.d' or die "mkdir: $!";
# (the hand-off file is written during the run: after pg_upgrade_output.d)
utime(undef, undef, $handoff);
$offset = -s $new->logfile;
ok(start_binary_upgrade($new), 'the new cluster starts in binary-upgrade mode');
like(slurp_file($new->logfile, $offset),
	qr/uidgen took over the high-water mark of the old cluster from "\Q$handoff\E"/,
	'it took the old cluster\'s state over');
$new->stop;
rmdir $new->data_dir . '/pg_upgrade_output.d';
$new->start;
my $first = $new->safe_psql('postgres', 'SELECT snowflake_next()');
cmp_ok($first, '>', $new_max, 'its first ID is above its own earlier IDs (its mark was higher)');
cmp_ok($first, '>', $old_max, 'and above the old cluster\'s');
$new->stop;

# 3. A corrupt hand-off file: the new cluster does not start, its state
# file untouched.
my $corrupt = uidgen_node('corrupt', %conf);
$corrupt->stop;
my $state_before = slurp_file($corrupt->data_dir . '/uidgen.state');
mkdir $corrupt->data_dir . '/pg_upgrade_output.d' or die "mkdir: $!";
open my $fh, '>', $handoff or die "open: $!";
print $fh 'x' x 104;
close $fh;
$offset = -s $corrupt->logfile;
ok(!start_binary_upgrade($corrupt), 'a corrupt hand-off file: the new cluster does not start');
like(slurp_file($corrupt->logfile, $offset),
	qr/uidgen state file "\Q$handoff\E" is unreadable or corrupt.*HINT:\s+If it is a hand-off file left by an earlier pg_upgrade, remove it and run pg_upgrade again\./s,
	'XX001, naming the hand-off file, with the hint to remove it');
is(slurp_file($corrupt->data_dir . '/uidgen.state'), $state_before,
	'its own state file is as it was');

# 4. A hand-off file from before this run: not taken; refused until the old
# state file is supplied.
my $stale = uidgen_node('stale', %conf);
$stale->stop;
copy($old->data_dir . '/uidgen.state', $handoff) or die "copy: $!";
utime(time() - 3600, time() - 3600, $handoff);
mkdir $stale->data_dir . '/pg_upgrade_output.d' or die "mkdir: $!";
$offset = -s $stale->logfile;
ok(start_binary_upgrade($stale), 'a stale hand-off file: the new cluster starts');
like(slurp_file($stale->logfile, $offset),
	qr/WARNING:\s+uidgen found no high-water mark handed over by the old cluster.*No hand-off file "\Q$handoff\E" was written during this pg_upgrade run/s,
	'and warns that no mark was handed over during the run');
$stale->stop;
rmdir $stale->data_dir . '/pg_upgrade_output.d';
$stale->start;
like(psql_error($stale, 'SELECT snowflake_next()'),
	qr/55000:\s+uidgen does not know the high-water mark of the cluster this one was upgraded from/,
	'it refuses to generate');
$stale->stop;

# 5. A symbolic link in the hand-off file's place, to a fresh valid file:
# not taken either.
my $linked = uidgen_node('linked', %conf);
$linked->stop;
my $target = $linked->basedir . '/elsewhere.state';
copy($old->data_dir . '/uidgen.state', $target) or die "copy: $!";
unlink $handoff;
mkdir $linked->data_dir . '/pg_upgrade_output.d' or die "mkdir: $!";
symlink($target, $handoff) or die "symlink: $!";
$offset = -s $linked->logfile;
ok(start_binary_upgrade($linked), 'a symbolic link as hand-off file: the new cluster starts');
like(slurp_file($linked->logfile, $offset),
	qr/uidgen found no high-water mark handed over by the old cluster/,
	'and does not take it');
$linked->stop;
unlink $handoff;

# 6. Not preloaded, in binary-upgrade mode: loading it is refused.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
ok(start_binary_upgrade($plain), 'a cluster without uidgen preloaded starts in binary-upgrade mode');
like(psql_error($plain, "LOAD 'uidgen'"),
	qr/55000:\s+uidgen must be in "shared_preload_libraries" of both clusters when pg_upgrade runs/,
	'loading uidgen there is refused (55000)');
$plain->stop;

done_testing();
