# Numbering per period: a zone whose local date goes forward past midnight
# and then back before it (a "day" that comes back).  Real zones did this:
# Antarctica/Casey on 2010-03-05 (02:00 +11 -> 23:00 +08 of the day
# before), so the key of a moment is not monotonic in time there.
#
# period_of() (src/blocks/period.c) finds the bounds of a period by
# bisection on the key, which assumes that the moments of one key are
# contiguous.  Where they are not, the end found is that of the LAST stretch
# of the key the bisection probes, and the cache (blockcache.c cache_take)
# then carves numbers of a day during the next day.  This test builds such a
# zone around the real clock with a POSIX TZ string (no faked clock):
#
#   std local 23:00:00 of day J -> 00:00:00 of day J+1 (DST starts, +1h),
#   DST local 00:00:20 of day J+1 -> 23:00:20 of day J (DST ends),
#
# so day J+1 lasts 20 s (from T1), then day J again for almost an hour.
# A range of day J delivered before T1 got the bounds
# [start of J, T3) with T3 the end of the second stretch, and seq_next() at
# T1 + 5 s hands out a number of day J although the clock's day is J+1 (the
# allocator, asked then, restarts the row in day J+1).
#
# Expected (docs/block-sequences.md, "Cached within the period": "no time
# zone rule ... can put a moment of another period inside" and "no number
# is handed out after its period has ended"): the number's key is the key
# of the moment it was handed out.  Failed on 11e0010 (bisection alone); period_of() now stops its
# search where the zone changes its UTC offset.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use POSIX qw(floor);
use lib 'test';
use UidgenTest;

# (no idle timeout: the range of day J must stay in the cache)
my $node = uidgen_node('period_zone', 'uidgen.allocator_idle_timeout' => 0);

# T1: about 10 s after the delivery below, on a whole second.
my $t1 = floor(time()) + 15;
my $secs = $t1 % 86400;
# std offset S (local = UTC + S) such that T1 is 23:00:00 std local
my $s = (23 * 3600 - $secs) % 86400;
$s -= 86400 if $s >= 12 * 3600;
my @lt = gmtime($t1 + $s);
my $yday = $lt[7];    # 0-based, Feb 29 counted: POSIX "n"
plan skip_all => 'day J would be the last of the year' if $yday >= 364;
my $posix_off = -$s;    # POSIX: the value added to local time to get UTC
my $sign = $posix_off < 0 ? '-' : '+';
my $a = abs($posix_off);
my $off = sprintf('%s%d:%02d:%02d', $sign, int($a / 3600), int(($a % 3600) / 60), $a % 60);
my $tz = sprintf('<STD>%s<DST>,%d/23:00:00,%d/0:00:20', $off, $yday, $yday + 1);
note "zone $tz, T1 = " . scalar(gmtime($t1));

# the zone as period.c sees it: J, then J+1 for 20 s, then J again
my $keys = $node->safe_psql('postgres', qq{
    SELECT string_agg(seq_period_key('day', '$tz', to_timestamp($t1) + d * interval '1 s')::text, ',' ORDER BY d)
      FROM unnest(ARRAY[-1, 0, 19, 20, 3000]) AS d});
my @k = split /,/, $keys;
is_deeply([ $k[2] > $k[0] ? 1 : 0, $k[1] == $k[2] ? 1 : 0, $k[3] == $k[0] ? 1 : 0, $k[4] == $k[0] ? 1 : 0 ],
    [ 1, 1, 1, 1 ], "zone: day J, day J+1 for 20 s from T1, day J again ($keys)");

$node->safe_psql('postgres', qq{
    SELECT seq_create('edge', reset => 'day', max_value => 99999, time_zone => '$tz')});
# the first range, of day J, delivered about 10 s before T1
my $first = $node->safe_psql('postgres', q{SELECT seq_next('edge')});
is(int($first / 100000), $k[0], "first number is of day J ($first)");

# T1 + 5 s: the clock's day is J+1
sleep($t1 + 5 - time()) if time() < $t1 + 5;
my ($before, $n, $after) = split /\|/, $node->safe_psql('postgres', qq{
    SELECT seq_period_key('day', '$tz', clock_timestamp()),
           seq_next('edge'),
           seq_period_key('day', '$tz', clock_timestamp())});
note "at T1 + 5 s: key $before, number $n, key $after";
is($before, $k[2], 'the clock is in day J+1');
is(int($n / 100000), $before,
    'seq_next() in day J+1 hands out a number of day J+1, not one of the day that ended');

$node->stop;
done_testing();
