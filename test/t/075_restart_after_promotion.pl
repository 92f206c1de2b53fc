# Guarantee: the clock jump a server owes after recovery ends survives a
# restart.  A standby that is promoted (here: restarted without
# standby.signal) and restarted before any ID was generated still jumps
# uidgen.max_clock_drift ahead, so it does not repeat IDs of the old primary
# whose clock ran ahead.  With the primary's worker id it is a copy, which
# refuses snowflake IDs until uidgen_take_over(), also when promoted by a
# restart.  And shared-memory reinitialisations after backend
# crashes do not push the high-water mark ahead when no ID is issued, so
# generation does not stall after a crash loop.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

my $primary = uidgen_node(
	'primary',
	init => { allows_streaming => 1 },
	'uidgen.worker_id' => 1,
	'uidgen.sequence_bits' => 4,
	'uidgen.max_clock_drift' => 5000);
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
# Only the pending jump, not a copied mark, may protect the standby.
unlink($standby->data_dir . '/uidgen.state');
$standby->start;

######## the old primary runs about 5 s ahead, then is gone
my $old_max = $primary->safe_psql('postgres',
	'SELECT max(snowflake_next()) FROM generate_series(1, 100000)');
cmp_ok(uidgen_status($primary)->{clock_ahead}, '>', 3,
	'precondition: the primary runs more than 3 s ahead of its wall clock');
$primary->wait_for_catchup($standby);
$primary->stop('immediate');

######## the standby remembers that it owes the jump
$standby->stop;
is(read_state_file($standby)->{rebase_pending}, 1,
	'a standby saves the pending post-recovery jump in uidgen.state');

# Promote by restarting without standby.signal: recovery ends at start-up,
# and the signal file that marked the server as a standby is gone.
unlink($standby->data_dir . '/standby.signal') or die "no standby.signal: $!";
my $log_offset = -s $standby->logfile;
$standby->start;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
like(psql_error($standby, 'SELECT snowflake_next()'), qr/ERROR:\s+55000:[^\n]*copied from/,
	'promoted by a restart with the primary\'s worker id, the standby refuses snowflake IDs');
is(uidgen_status($standby)->{state}, 'copy', 'state is copy');
$standby->safe_psql('postgres', 'SELECT uidgen_take_over()');
my $first = $standby->safe_psql('postgres', 'SELECT snowflake_next()');
cmp_ok($first, '>', $old_max,
	'the promoted server\'s first ID is above the old primary\'s last');
ok( $standby->log_contains(
		'uidgen moved its clocks past the former primary after recovery\n.*uidgen.max_clock_drift \(5000 ms\) ahead',
		$log_offset),
	'the jump is logged');
is(uidgen_status($standby)->{state}, 'ok', 'state is ok after the take-over and the jump');
$standby->stop;
is(read_state_file($standby)->{rebase_pending}, 0,
	'once made, the jump is no longer pending in uidgen.state');

######## backend crashes without IDs issued leave the mark where it was
my $node = uidgen_node('crashes', restart_after_crash => 'on');
$node->safe_psql('postgres', 'SELECT snowflake_next()');
my $mark = uidgen_status($node)->{high_water_mark};
for my $i (1 .. 5)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c', 'SELECT pg_sleep(60)' ],
		'>', \$out, '2>', \$err);
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'});
	my $pid = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'});
	kill 'KILL', $pid;
	$h->finish;
	# (through the crash restart, whose start may break psql's pipe)
	poll_through_crashes($node, 'SELECT true') or die 'no server after the crash restart';
	# the keeper, restarted with shared memory, has had time to act: it runs
	# again, and then a second passes (time must pass: the check is that
	# it did not move the mark)
	wait_until(sub { defined keeper_pid($node) }) or die 'no keeper after the crash restart';
	sleep 1;
}
ok($node->log_contains('terminated by signal 9'), 'precondition: backends crashed');
is(uidgen_status($node)->{high_water_mark}, $mark,
	'five crash restarts without IDs issued did not move the high-water mark');
# (the statement's time, not psql's start as well)
my $took = statement_seconds($node, 'SELECT snowflake_next()');
cmp_ok($took, '<', 1.5, "the first ID after the crashes comes without a long wait (${took}s)");

done_testing();
