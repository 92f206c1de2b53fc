# Guarantee: after a crash, the first calls wait at most about one window of
# the state file (2 s) for the wall clock, whatever uidgen.max_clock_drift
# allows.  The mark is written a window ahead of the clock; a burst can run
# the clock up to the drift bound ahead of the wall clock; after a crash
# the clock resumes above the mark and callers wait until it is within the
# drift bound again.  If the window grew with the drift bound (it was
# max(2 s, 2 x drift)), the wait after a crash would too: an hour with
# max_clock_drift = 1h.
#
# Here every snowflake ID takes a whole millisecond (no worker or sequence
# bits), so a burst of 60,000 IDs runs the clock a minute ahead under a
# one-hour drift bound; then kill -9, and the first call after the restart
# must come back within a few seconds, above every ID issued before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;
use lib 'test';
use UidgenTest;

my %layout = (worker_bits => 0, sequence_bits => 0);
my $node = uidgen_node('crash_after_burst',
	'uidgen.max_clock_drift' => '1h',
	'uidgen.worker_bits' => 0,
	'uidgen.sequence_bits' => 0);

my $burst_max = $node->safe_psql('postgres',
	'SELECT max(snowflake_next()) FROM generate_series(1, 60000)');
my $ahead_ms = snowflake_ms($burst_max, %layout) - int(Time::HiRes::time() * 1000);
cmp_ok($ahead_ms, '>', 50_000, 'the burst ran the clock about a minute ahead of the wall clock')
  or diag("ahead by $ahead_ms ms");
my $status = uidgen_status($node);
is($status->{waits}, '0', 'the burst did not wait: the drift bound allows it');

kill9_and_wait($node);
my $mark_ms = read_state_file($node)->{hwm_ms};
cmp_ok($mark_ms - snowflake_ms($burst_max, %layout), '<=', 2_100,
	'the mark on disk is at most one window (2 s) above the last ID');
$node->start;

my $t0 = Time::HiRes::time();
my ($ret, $first, $err) = $node->psql('postgres',
	"SET statement_timeout = '30s'; SELECT snowflake_next()");
my $waited = Time::HiRes::time() - $t0;
is($ret, 0, 'the first call after the crash succeeds') or diag($err);
cmp_ok($waited, '<', 5, 'and comes back within a few seconds')
  or diag(sprintf('waited %.1f s', $waited));
cmp_ok($first, '>', $burst_max, 'above every ID issued before the crash');

$node->stop;
done_testing();
