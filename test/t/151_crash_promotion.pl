# Guarantee: a standby promoted with a worker id of its own issues IDs
# above every ID its primary issued, across a crash anywhere on the way:
# while it replays the primary's marks, at the end of its recovery, and in
# a call of snowflake_next() that a promotion overtakes.
#
# The origin runs 60 s ahead (libfaketime) with worker id 1; four standbys
# (real clocks, worker ids 2 to 5), from one base backup, replay its burst;
# it stops (immediate) and each standby is promoted.  Without the marks
# they replayed, they would issue IDs about 59 s below the origin's.
#  race (2): a session stopped at crash point snowflake-before-check
#      (wait) while the standby is promoted, then released, the keeper
#      stopped meanwhile so that only that session can settle the end of
#      recovery: 0.2.0 tested the copy flag and recovery apart, so a
#      promotion between the two let a tick out on the clock from before
#      the rebase, below the origin's last ID;
#  bf (3): crash point redo-mark-before-file (kill) in the startup process
#      on the first mark replayed; then, promoted, commit-before-file
#      (kill, in the keeper ending recovery);
#  rp (4): its keeper stopped, it replays the burst and makes a
#      restartpoint past it, and is killed (-9): 0.2.0 kept the replayed
#      mark in shared memory until the keeper saved it, so the restarted
#      standby had lost it and its promotion started below the origin's
#      IDs; then, promoted, commit-after-wal;
#  af (5): promoted, commit-after-file.
# Every node's marks are checked before any node hands out IDs (the first
# call waits for the clock to come within the drift bound of the origin's
# last ID, after which a wrong mark could no longer be seen); the race,
# whose call waits so, comes after the others' end-of-recovery checks.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

plan skip_all => 'libfaketime is not installed' unless faketime_available();

my ($primary, $race, $bf, $rp, $af) = skewed_origin('pr', '+60s',
	[ map { { name => "pr_$_->[0]", worker_id => $_->[1] } }
		[ 'race', 2 ], [ 'bf', 3 ], [ 'rp', 4 ], [ 'af', 5 ] ]);
my %worker = ($race->name => 2, $bf->name => 3, $rp->name => 4, $af->name => 5);

######## the burst, replayed: bf crashes in redo, rp's keeper is stopped
arm_crash_point($bf, 'redo-mark-before-file');
my $keeper = stop_keeper($rp);
my $old = origin_burst($primary, 30000);
ok(wait_for_server_exit($bf), 'redo-mark-before-file: the standby went down');
is(count_in_log($bf, qr/uidgen crash point "redo-mark-before-file" reached/), 1,
	'redo-mark-before-file: the startup process reached the crash point');
disarm_crash_point($bf);
$bf->start;
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($_) for ($race, $bf, $rp, $af);
my $lead = snowflake_ms($old->{max_id}, sequence_bits => 4) / 1000 - time();
cmp_ok($lead, '>', 45, "precondition: the origin's last ID is ${lead}s ahead of the real clock");

# The standby holds a mark above the origin's last ID.
sub check_mark
{
	my ($node, $what) = @_;
	is( $node->safe_psql('postgres', qq{
		SELECT origin_high_water_mark > snowflake_timestamp($old->{max_id}) FROM uidgen_status()}),
		't', "$what: the replayed mark is above the origin's last ID");
	return;
}
check_mark($bf, 'redo-mark-before-file, restarted');

######## rp: a restartpoint past the marks, then kill -9 before the keeper saves
$rp->safe_psql('postgres', 'CHECKPOINT');
kill9_with_keeper($rp, $keeper);
$primary->stop('immediate');
$rp->start;
check_mark($rp, 'restartpoint then kill -9, restarted');

######## end of recovery: crash points in the keeper
sub end_of_recovery_crash
{
	my ($node, $point) = @_;
	my $offset = -s $node->logfile;
	arm_crash_point($node, $point);
	$node->safe_psql('postgres', 'SELECT pg_promote(wait => false)');
	ok(wait_for_server_exit($node), "$point: the server went down");
	is(count_in_log($node, qr/uidgen crash point "\Q$point\E" reached/, $offset), 1,
		"$point: the crash point was reached");
	disarm_crash_point($node);
	$node->start;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'recovery did not end';
	check_hwm_above($node, "$point, restarted", $old);
	my $st = uidgen_status($node);
	is($st->{state}, 'ok', "$point, restarted: state is ok");
	is($st->{worker_id}, $worker{ $node->name }, "$point, restarted: its own worker id");
	return;
}
end_of_recovery_crash($bf, 'commit-before-file');
end_of_recovery_crash($af, 'commit-after-file');
end_of_recovery_crash($rp, 'commit-after-wal');


######## race: a promotion between the start of snowflake_next() and its check
$keeper = stop_keeper($race);
my $offset = -s $race->logfile;
my $client = start_clients($race, q{
SET uidgen.crash_point = 'snowflake-before-check';
SET uidgen.crash_action = 'wait';
SELECT snowflake_next();
});
ok(wait_for_log($race, qr/uidgen crash point "snowflake-before-check" reached/, $offset),
	'race: snowflake_next() reached its crash point on the standby');
$race->promote;
$race->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not end';
append_to_file($race->data_dir . '/uidgen.crash_release', '');
stop_clients($client);
kill 'CONT', $keeper;
ok(count_in_log($race, qr/uidgen crash point "snowflake-before-check" released/, $offset) >= 1,
	'race: the session was released after the promotion');
my ($id) = client_lines($client);
my $err = client_errors($client);
if (defined $id && $id =~ /^\d+$/)
{
	note(sprintf('race: the overtaken call returned an ID %.3f s %s the origin\'s last',
		abs(snowflake_ms($id, sequence_bits => 4) - snowflake_ms($old->{max_id}, sequence_bits => 4)) / 1000,
		$id > $old->{max_id} ? 'above' : 'BELOW'));
	ok($id > $old->{max_id}, "race: the ID of the overtaken call is above the origin's last")
	  or diag("id $id, origin's last $old->{max_id}");
	ok(!$old->{ids}{$id}, 'race: the ID of the overtaken call is not one of the origin\'s');
}
else
{
	like($err, qr/55000/, 'race: the overtaken call refused (55000)');
}

######## then the IDs of each, all above the origin's (the first call
######## waits out the origin's lead: every mark was checked before)
promoted_ids_above($race, 'race, afterwards', $old, 2);
# (the race's call waited out the origin's lead; the others' drift bound
# is raised anyway, so that theirs need not wait: their marks were checked)
for my $node ($bf, $af, $rp)
{
	$node->append_conf('postgresql.conf', "uidgen.max_clock_drift = '120s'\n");
	$node->reload;
}
promoted_ids_above($bf, 'commit-before-file, restarted', $old, 3);
promoted_ids_above($af, 'commit-after-file, restarted', $old, 5);
promoted_ids_above($rp, 'commit-after-wal, restarted', $old, 4);

$_->stop for ($race, $bf, $rp, $af);
done_testing();
