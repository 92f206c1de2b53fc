# Guarantee: uidgen_take_over() is durable before it takes effect.  A
# crash anywhere on its path leaves either the copy refusing (SQLSTATE
# 55000, "copied from"), or a server settled whose IDs are above every ID
# its origin issued.
#
# The origin runs 60 s ahead (libfaketime) with worker id 1; four standbys
# (real clocks) with its worker id, from one base backup, replay its burst;
# it stops (immediate, a failover) and each standby is promoted: a copy
# that refuses snowflake_next() until uidgen_take_over().  Then:
#  s1: crash points takeover-before-commit and commit-before-file (kill,
#      in the session running uidgen_take_over()): after a restart it
#      still refuses; then a take-over and a kill -9 of the server at once,
#      before the keeper writes the state file again (the keeper is
#      stopped): the issue of 0.2.0, whose take-over raised the clocks in
#      shared memory only and wrote the file with the old mark, so the
#      restarted server, settled, issued IDs at its own clock, about 9 s
#      below the origin's last;
#  s2, s3, s4: crash points commit-after-file, commit-after-wal and
#      takeover-after-commit: after a restart, settled, above the origin.
# Every node's high-water mark is checked before any node hands out IDs
# (which waits for the clock to come within the drift bound of the
# origin's last ID, after which a wrong mark could no longer be seen).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

plan skip_all => 'libfaketime is not installed' unless faketime_available();

my ($primary, @copies) = skewed_origin('tk', '+60s',
	[ map { { name => "tk_s$_" } } 1 .. 4 ]);
my $old = origin_burst($primary, 30000);
$primary->wait_for_catchup($_) for @copies;
$primary->stop('immediate');
my $lead = snowflake_ms($old->{max_id}, sequence_bits => 4) / 1000 - time();
cmp_ok($lead, '>', 45, "precondition: the origin's last ID is ${lead}s ahead of the real clock");

for my $node (@copies)
{
	$node->promote;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'promotion did not end';
}

# $node refuses snowflake_next() as a copy of worker 1.
sub check_refused
{
	my ($node, $what) = @_;
	like(psql_error($node, 'SELECT snowflake_next()'),
		qr/ERROR:\s+55000:[^\n]*copied from/,
		"$what: snowflake_next() refused (55000, copied from)");
	my $st = uidgen_status($node);
	is($st->{state}, 'copy', "$what: state is copy");
	is($st->{origin_worker_id}, '1', "$what: origin_worker_id is 1");
	# (no uuidv7_next(): its ticks would move the durable mark above the
	# origin's before the take-over, and hide a take-over that does not)
	return;
}

# $node is settled, with worker id 1, and starts above the origin's last
# ID (the IDs it issues are checked at the end).
sub check_settled
{
	my ($node, $what) = @_;
	check_hwm_above($node, $what, $old);
	my $st = uidgen_status($node);
	is($st->{state}, 'ok', "$what: state is ok");
	is($st->{origin_worker_id}, '', "$what: origin_worker_id is NULL");
	return;
}

# uidgen_take_over() in a session whose crash point $point kills the
# backend, which takes the server down; then a restart.
sub take_over_crash
{
	my ($node, $point) = @_;
	my $offset = -s $node->logfile;
	my $err = psql_error($node, qq{
		SET uidgen.crash_point = '$point';
		SET uidgen.crash_action = 'kill';
		SELECT uidgen_take_over()});
	like($err, qr/server closed the connection|connection to server was lost/,
		"$point: uidgen_take_over() lost its connection");
	ok(wait_for_server_exit($node), "$point: the server went down");
	is(count_in_log($node, qr/uidgen crash point "\Q$point\E" reached/, $offset), 1,
		"$point: the crash point was reached");
	$node->start;
	return;
}

my ($s1, $s2, $s3, $s4) = @copies;
check_refused($s1, 'promoted copy');

######## s1: crashes before the state file: still a copy
for my $point ('takeover-before-commit', 'commit-before-file')
{
	take_over_crash($s1, $point);
	check_refused($s1, "$point, restarted");
}

######## s1: take-over, then kill -9 before the keeper writes the file again
my $keeper = stop_keeper($s1);
$s1->safe_psql('postgres', 'SELECT uidgen_take_over()');
kill9_with_keeper($s1, $keeper);
$s1->start;
check_settled($s1, 'take-over then kill -9');

######## s2, s3, s4: crashes once the state file is written: settled
my %node = ('commit-after-file' => $s2, 'commit-after-wal' => $s3,
	'takeover-after-commit' => $s4);
for my $point ('commit-after-file', 'commit-after-wal', 'takeover-after-commit')
{
	take_over_crash($node{$point}, $point);
	check_settled($node{$point}, "$point, restarted");
	# A second take-over has nothing to do.
	my ($err) = psql_error($node{$point}, 'SELECT uidgen_take_over()');
	like($err, qr/not a copy/, "$point, restarted: nothing left to take over");
}

######## then each settled node's IDs, all above the origin's (the drift
######## bound raised past the origin's lead first, so that they come at
######## once instead of waiting it out: the marks were checked above)
for my $node (@copies)
{
	$node->append_conf('postgresql.conf', "uidgen.max_clock_drift = '120s'\n");
	$node->reload;
}
promoted_ids_above($s1, 'take-over then kill -9', $old, 1);
promoted_ids_above($node{$_}, "$_, restarted", $old, 1)
  for ('commit-after-file', 'commit-after-wal', 'takeover-after-commit');

$_->stop for @copies;
done_testing();
