# Guarantee: uidgen_take_over() makes durable a mark above its whole floor
# (uidgen.max_clock_drift ahead of the wall clock at the take-over), not
# only the mark the end of recovery left, before anything can use it.
#
# A standby (worker id 1, its primary's, 20 s drift bound) is promoted
# while its primary, whose clock runs 16 s ahead (within the bound), goes
# on generating for 10 s: a split brain, in which the promoted copy refuses.
# The end of recovery made durable a mark a little more than the drift
# bound ahead of the promotion; the primary's last IDs are about 26 s ahead
# of it, and still ahead of the copy's clock when its mark is checked (a
# precondition: else a restart at the wall clock would pass as well).
# The primary then stops for good and the operator takes over, with the
# keeper stopped, then kill -9 at once: the restarted server's mark and
# its IDs must be above everything the primary issued.  A take-over that
# raised the clocks in memory but wrote the state file with the mark of
# the end of recovery restarts below the primary's last seconds of IDs.
# (150 covers each crash point of the take-over; there the origin stops
# before the promotion, so the end of recovery's mark covers it already.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

plan skip_all => 'libfaketime is not installed' unless faketime_available();

my ($primary, $copy) = skewed_origin('sb', '+16s',
	[ { name => 'sb_s1', conf => "uidgen.max_clock_drift = '20s'\n" } ]);
my $old = origin_burst($primary, 1000);
$primary->wait_for_catchup($copy);
$copy->promote;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not end';
like(psql_error($copy, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000:[^\n]*copied from/,
	'promoted copy: snowflake_next() refused (55000, copied from)');

# Split brain: the primary goes on for 10 s after the end of recovery.
my $t0 = time();
$old = origin_burst($primary, 2000, $old) while time() - $t0 < 10;
$primary->stop('immediate');
my $after = (snowflake_ms($old->{max_id}, sequence_bits => 4) / 1000) - $t0;
cmp_ok($after, '>', 23,
	sprintf('precondition: the primary\'s last ID is %.1f s after the end of recovery', $after));

my $keeper = stop_keeper($copy);
$copy->safe_psql('postgres', 'SELECT uidgen_take_over()');
kill9_with_keeper($copy, $keeper);
$copy->start;
check_hwm_above($copy, 'take-over then kill -9', $old);
promoted_ids_above($copy, 'take-over then kill -9', $old, 1);

$copy->stop;
done_testing();
