# Guarantee: a process preempted between its reads of the wall clock and of
# the monotonic clock does not report a backwards step of the wall clock
# that did not happen.  Step detection compares the wall clock with real
# time (monotonic time plus an offset); read in that order, a preemption of
# more than the 10 ms tolerance between the two reads made the wall clock
# look that far behind (0.1.0: one of 24 ms seen under load, which also
# made 050_clock_step_back flaky).  Now the wall read sits between two
# monotonic reads, and a pair more than 5 ms apart gives no verdict.
#
# An LD_PRELOAD shim (test/clock_shim.c) makes every coarse wall-clock read
# return 30 ms late, as if preempted right after it, while a trigger file
# exists; the wall clock itself never steps.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

my $shim = build_shim('clock_shim');
my $trigger = PostgreSQL::Test::Utils::tempdir() . '/delay';
my $node = uidgen_node('no_false_step', start => 0);
{
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{UIDGEN_SHIM_DELAY} = $trigger;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION uidgen');
$node->safe_psql('postgres', 'SELECT snowflake_next(), uuidv7_next()');
my $offset = -s $node->logfile;

# 40 calls, each in a new millisecond, so each one compares the clocks, and
# the keeper's once-a-second comparisons meanwhile.
append_to_file($trigger, "on\n");
my $t0 = time();
for (1 .. 20)
{
	$node->safe_psql('postgres', 'SELECT snowflake_next(), uuidv7_next()');
}
my $took = time() - $t0;
# and two of the keeper's once-a-second comparisons under the delay (time
# must pass: the check is that none of them counts a step)
sleep(2);
unlink($trigger) or die "could not remove $trigger: $!";
cmp_ok($took, '>=', 40 * 0.030 * 0.9,
	sprintf('precondition: the wall-clock reads were held back (%.2f s for 40 calls)', $took));

my $status = uidgen_status($node);
is($status->{clock_backward_episodes}, '0', 'no backwards step was counted');
is(count_in_log($node, qr/went backwards/, $offset), 0, 'and none was logged');
like($node->safe_psql('postgres', 'SELECT snowflake_next() > 0, uuidv7_next() IS NOT NULL'),
	qr/^t\|t$/, 'generation goes on');

$node->stop;
done_testing();
