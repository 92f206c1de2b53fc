# Numbering per period across two failovers (issue 38, hole 1): the skip
# after a promotion or a take-over must start an ended period beyond the
# reset_skip the row already carries, and add to reset_skip, never
# overwrite it.
#
# Primary A, its streaming standby B, and C, a standby of B; block
# sequences numbered per day (uidgen.promotion_skip = 100), each in a time
# zone of its own whose midnight falls a few seconds ahead (zone_ending_at(),
# as in 118): "m" (start 5, increment 3), "h" and "j" (start 2).
#   A dies; B is promoted before either midnight and its first round skips
#   every row within the day, reset_skip = 100 (the day ends within the
#   hour).  C replays that skip, a pg_basebackup copy D of B is taken, and
#   C stops: B's later commits never reach C nor D.
#   "h": B's clock is ahead (the row's zone moved on B so that its midnight
#   has passed, as a clock ahead by less than an hour would see it): B starts the next day
#   at start + 100 and hands out 5 numbers of it.
#   "j", a quiet row: last used the day before h's, with reset_skip 7 (set
#   by hand on B, replayed by C and D); B, clock ahead, goes from that day
#   straight into the day after h's midnight, at start + 7, and hands out
#   95 numbers (fewer than the skip).
#   "m": after its midnight B starts the next day at start + 100 * 3 and
#   hands out 5 numbers; then B dies.
# (1) C is promoted after m's midnight and before h's: "m" has ended on C,
#     which must restart it beyond both skips (start + 200 * 3, not
#     start + 100 * 3: B's 5 numbers again); "h" has not ended but ends
#     within the hour: reset_skip must become 100 + 100 (not 100), and
#     after h's midnight C must count from start + 200 (not start + 100:
#     B's 5 numbers again).  "j" has ended and the next day begins within
#     the hour: C restarts it at start + 7 + 100 and must set reset_skip
#     to 7 + 100 (not 100: after h's midnight it would count from
#     start + 100, into B's 95).
# (2) D, started after both midnights and taken over with
#     uidgen_take_over() (B is gone), restarts the three rows beyond
#     B's reset_skip and the skip too.  (C and D are alternative
#     histories, two copies of B: they are not compared with each other.)
# Every number handed out is recorded per node; no number of A, B and C,
# nor of A, B and D, repeats; the first numbers are exact.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use POSIX qw(floor);
use lib 'test';
use UidgenTest;

my $skip = 100;
my $scale = 10_000_000;    # max_value 9999999: counts in 7 digits

my $na = uidgen_node('pdf_a', init => { allows_streaming => 1 },
	'uidgen.promotion_skip' => $skip);
$na->backup('bk_b');
my $nb = PostgreSQL::Test::Cluster->new('pdf_b');
$nb->init_from_backup($na, 'bk_b', has_streaming => 1);
$nb->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$nb->start;
$na->wait_for_catchup($nb);
$nb->backup('bk_c');
my $nc = PostgreSQL::Test::Cluster->new('pdf_c');
$nc->init_from_backup($nb, 'bk_c', has_streaming => 1);
$nc->append_conf('postgresql.conf', "uidgen.worker_id = 2\n");
$nc->start;
# (a standby's own LSN: on 15, wait_for_catchup() asks for the primary's)
$nb->wait_for_catchup($nc, 'replay', $na->lsn('insert'));

# What each node handed out: node => ["sequence number", ...].
my %got = map { $_ => [] } qw(A B C D);

# $n numbers of sequence $seq from $node (recorded as $who's).
sub take
{
	my ($node, $who, $seq, $n) = @_;
	my @v = seq_take($node, $seq, $n);
	push @{ $got{$who} }, map { "$seq $_" } @v;
	return @v;
}

# The numbers handed out more than once by the nodes named.
sub repeated
{
	my %seen;
	$seen{$_}++ for map { @{ $got{$_} } } @_;
	return join(', ', sort grep { $seen{$_} > 1 } keys %seen);
}

# The rows' reset_skip on $node, "h:..,m:..".
sub reset_skips
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT string_agg(name || ':' || reset_skip, ',' ORDER BY name) FROM id_sequences});
}

# The midnights: "m"'s in 12 s, "h"'s 12 s later (time for the steps
# before each, about 1 and 3 s here; the preconditions below say if a
# machine was too slow).
my $t0 = floor(time());
my ($mm, $mh) = ($t0 + 12, $t0 + 24);
my ($zm, $m_before, $m_after) = zone_ending_at($mm);
my ($zh, $h_before, $h_after) = zone_ending_at($mh);
note("midnights: m $zm, h $zh; days $m_before, $m_after");
$na->safe_psql('postgres', qq{
	SELECT seq_create('m', reset => 'day', max_value => 9999999, start => 5, increment => 3,
	                  time_zone => '$zm');
	SELECT seq_create('h', reset => 'day', max_value => 9999999, start => 2, time_zone => '$zh');
	SELECT seq_create('j', reset => 'day', max_value => 9999999, start => 2, time_zone => '$zh');
});
my @a_m = take($na, 'A', 'm', 3);
my @a_h = take($na, 'A', 'h', 3);
my @a_j = take($na, 'A', 'j', 3);
is_deeply([ @a_m, @a_h, @a_j ],
	[ map({ $m_before * $scale + $_ } 5, 8, 11), map({ $h_before * $scale + $_ } 2, 3, 4, 2, 3, 4) ],
	'A: the first numbers of the day before midnight');
$na->wait_for_catchup($nb);
$nb->wait_for_catchup($nc, 'replay', $na->lsn('insert'));
$na->stop('immediate');

######## B promoted before midnight: the skip within the day
$nb->promote;
$nb->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'B was not promoted';
# (the first round skips every row: "m" by 100 * 3 from the end of what A
# reserved, "h" by 100)
my ($m_next, $h_next) = split /\n/, $nb->safe_psql('postgres',
	q{SELECT next_block_start FROM id_sequences WHERE name IN ('m', 'h') ORDER BY name = 'h'});
my @b_m = take($nb, 'B', 'm', 2);
is_deeply(\@b_m, [ map { $m_before * $scale + $m_next + $skip * 3 + $_ } 0, 3 ],
	'B promoted: "m" skips 100 * 3 ahead within the day');
cmp_ok(time(), '<', $mm - 1, sprintf('precondition: B skipped %.1f s before m\'s midnight', $mm - time()));
is(reset_skips($nb), "h:$skip,j:$skip,m:$skip", 'B: the day ends within the hour: reset_skip = 100');
# "j" as a quiet sequence leaves it: last used the day before, with a
# reset_skip of 7 from a promotion near that day's end (set by hand, as
# regress blocks_period does; a real one would take two midnights)
$nb->safe_psql('postgres', qq{UPDATE id_sequences SET reset_skip = 7,
	period = seq_period_key('day', '$zh', now() - interval '1 day') WHERE name = 'j'});
$nb->wait_for_catchup($nc);
is(reset_skips($nc), "h:$skip,j:7,m:$skip", 'C replayed B\'s skip');
$nb->backup('bk_d');
$nc->stop;

# "h": B's clock ahead of C's; B starts the next day and hands out 5
my $now = floor(time());
my ($zh_b, undef, $hb_after) = zone_ending_at($now);
is($hb_after, $h_after, "precondition: B's zone for h ($zh_b) is in the same next day");
$nb->safe_psql('postgres', "UPDATE id_sequences SET time_zone = '$zh_b' WHERE name IN ('h', 'j')");
my @b_h = take($nb, 'B', 'h', 5);
is_deeply(\@b_h, [ map { $h_after * $scale + 2 + $skip + $_ } 0 .. 4 ],
	'B, clock ahead: "h" starts the next day at start + reset_skip (102)');
# "j" straight from the day before into the next day: from start + 7, 95
# numbers (fewer than the skip)
my @b_j = take($nb, 'B', 'j', 95);
is_deeply(\@b_j, [ map { $h_after * $scale + 2 + 7 + $_ } 0 .. 94 ],
	'B, clock ahead: "j" starts the next day at start + 7, 95 numbers');

# "m": after midnight B hands out 5 numbers, then dies
sleep_until($mm + 0.2);
my @b_m2 = take($nb, 'B', 'm', 5);
is_deeply(\@b_m2, [ map { $m_after * $scale + 5 + $skip * 3 + 3 * $_ } 0 .. 4 ],
	'B after midnight: "m" starts the next day at start + reset_skip * 3 (305)');
$nb->stop('immediate');

######## (1) C promoted after m's midnight, before h's
$nc->start;
$nc->promote;
$nc->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'C was not promoted';
my @c_m = take($nc, 'C', 'm', 5);
cmp_ok(time(), '<', $mh - 1, sprintf('precondition: C skipped %.1f s before h\'s midnight', $mh - time()));
is_deeply(\@c_m, [ map { $m_after * $scale + 5 + 2 * $skip * 3 + 3 * $_ } 0 .. 4 ],
	'(1) C: "m" (its day ended) restarts beyond B\'s reset_skip and the skip: 5 + 200 * 3');
is(reset_skips($nc), 'h:' . (2 * $skip) . ',j:' . (7 + $skip) . ',m:0',
	'(1) C: "h" ends within the hour: reset_skip 100 + 100; "j" restarted, its next day within the hour: 7 + 100; "m" used its own up');
my @c_h = take($nc, 'C', 'h', 1);
is_deeply(\@c_h, [ $h_before * $scale + $h_next + 2 * $skip ],
	'(1) C: "h" skips 100 ahead within its day, beyond B\'s skip');
sleep_until($mh + 0.2);
push @c_h, take($nc, 'C', 'h', 5);
is_deeply([ @c_h[1 .. 5] ], [ map { $h_after * $scale + 2 + 2 * $skip + $_ } 0 .. 4 ],
	'(1) C after h\'s midnight: "h" starts the next day at start + 200');
my @c_j = take($nc, 'C', 'j', 5);
is_deeply(\@c_j, [ map { $h_after * $scale + 2 + 7 + $skip + $_ } 0 .. 4 ],
	'(1) C after h\'s midnight: "j" starts the next day at start + 7 + 100, beyond B\'s 95');
is(repeated(qw(A B C)), '', '(1) no number of A, B and C repeats');
$nc->stop;

######## (2) D, a copy of B started after both midnights, taken over
my $nd = PostgreSQL::Test::Cluster->new('pdf_d');
$nd->init_from_backup($nb, 'bk_d');
$nd->append_conf('postgresql.conf', "uidgen.worker_id = 3\n");
$nd->start;
my ($err) = psql_error($nd, q{SELECT seq_next('m')});
like($err, qr/55000.*block sequences of a copied data directory are fenced/s, '(2) D: block sequences fenced before the take-over');
$nd->safe_psql('postgres', 'SELECT uidgen_take_over()');
my @d_m = take($nd, 'D', 'm', 5);
is_deeply(\@d_m, [ map { $m_after * $scale + 5 + 2 * $skip * 3 + 3 * $_ } 0 .. 4 ],
	'(2) D taken over: "m" restarts at 5 + 200 * 3');
my @d_h = take($nd, 'D', 'h', 5);
is_deeply(\@d_h, [ map { $h_after * $scale + 2 + 2 * $skip + $_ } 0 .. 4 ],
	'(2) D taken over: "h" restarts at 2 + 200');
my @d_j = take($nd, 'D', 'j', 5);
is_deeply(\@d_j, [ map { $h_after * $scale + 2 + 7 + $skip + $_ } 0 .. 4 ],
	'(2) D taken over: "j" restarts at 2 + 7 + 100');
is(reset_skips($nd), 'h:0,j:0,m:0', '(2) D: no day ends within the hour: reset_skip 0');
is(repeated(qw(A B D)), '', '(2) no number of A, B and D repeats');
$nd->stop;

done_testing();
