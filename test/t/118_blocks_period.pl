# Numbering per period (issue 22, part 2) against a real clock crossing the
# end of a period.  A day ends when the test wants it to: each sequence
# counts days in a time zone of its own ("XXX+hh:mm:ss", POSIX) whose
# midnight falls a few seconds ahead of the real clock, so that every
# process of the server sees the same clock crossing it.  (The server also
# runs under libfaketime, file-driven, for (b); but on PostgreSQL 15 the
# postmaster and the background workers it starts, the allocator among
# them, were seen logging the real time while backends logged the faked
# one (probably: PostgreSQL 15 starts workers inside a signal handler,
# which runs while libfaketime's select() wrapper has faking off, and the
# child inherits that), so libfaketime cannot step the allocator's clock
# there: that step is made by moving the row's zone instead.)
#
# (a) clients stream seq_next() and seq_reserve_block(name, 3) of a 'table'
#     sequence and seq_next() of a 'gapless' one, all reset 'day', across
#     midnight, recording the server's clock before and after each call:
#     no number repeats; a number has the key of the day before only if
#     its call began before midnight, the key of the new day only if its
#     call ended after; the new day counts from start, gapless ones without
#     a gap.
# (b) the clock behind midnight again: the backends' clock stepped back
#     30 s (libfaketime) for gapless numbers, the row's zone moved 30 s
#     back for the allocator's: seq_next() and seq_reserve_block() fail
#     with 22008 and id_sequences does not change; forward again, they go
#     on where they were.
# (c) the allocator killed at "alloc-after-commit" in a round that
#     restarts a period (the row's period moved to the day before by hand):
#     after the crash restart the row is in the new day and the count goes
#     on after the committed restart, no number twice.
# (d) pg_dump and pg_restore into a new database carry reset, period and
#     reset_skip, and the restored sequence goes on without a repeat.
# (e) promotion shortly before midnight: the skip sets reset_skip to
#     uidgen.promotion_skip, so the first number after midnight counts from
#     start + skip * increment; a row whose period had ended restarts at
#     start + skip * increment at once.
#
# Skipped without libfaketime.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use POSIX qw(floor strftime);
use lib 'test';
use UidgenTest;

plan skip_all => 'libfaketime is not installed' unless faketime_available();

my $scale = 10_000_000;    # max_value 9999999: counts in 7 digits, more than 8 s of
                           # clients can take on any machine (5 digits ran out on a fast one)

# Set the backends' clock of the server reading $file $secs seconds off.
sub clock_off
{
	my ($file, $secs) = @_;
	faketime_set($file, sprintf('%+d', $secs));
	return;
}

# The server's clock (a backend's), Unix time.
sub server_clock
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
}

my $node = uidgen_node('period', start => 0, restart_after_crash => 'on',
	'uidgen.block_timeout' => '1min');
my $fake = $node->basedir . '/faketime';
clock_off($fake, 0);
start_faked($node, $fake);
$node->safe_psql('postgres', 'CREATE EXTENSION uidgen');
my $midnight = floor(time()) + 10;
my ($zone, $before, $after) = zone_ending_at($midnight);
note("midnight of $zone: " . strftime('%T', gmtime($midnight)) . " UTC; days $before, $after");
$node->safe_psql('postgres', qq{
	SELECT seq_create('tab', reset => 'day', max_value => 9999999, time_zone => '$zone');
	SELECT seq_create('gap', reset => 'day', max_value => 9999999, time_zone => '$zone',
	                  strategy => 'gapless');
	SELECT seq_create('cr', reset => 'day', max_value => 9999999, time_zone => '$zone');
});
# a few numbers of the day before midnight first
$node->safe_psql('postgres', q{
	SELECT seq_next('tab') FROM generate_series(1, 5);
	SELECT seq_next('gap') FROM generate_series(1, 5);
});

######## (a) streaming across midnight
sleep_until($midnight - 5);
my $clock = server_clock($node);
ok($clock < $midnight && $clock > $midnight - 8,
	sprintf('precondition: the server clock is %.1f s before midnight', $midnight - $clock));
my $before_line = "SELECT 'b', extract(epoch FROM clock_timestamp());\n";
my %call = (
	tab => "SELECT 'n', seq_next('tab'), extract(epoch FROM clock_timestamp());\n",
	res => "SELECT 'r', first_id, last_id, extract(epoch FROM clock_timestamp()) FROM seq_reserve_block('tab', 3);\n",
	gap => "SELECT 'n', seq_next('gap'), extract(epoch FROM clock_timestamp());\n",
);
my @kinds = ('tab', 'tab', 'res', 'gap');
my $clients = start_clients($node,
	map { "SET application_name = 'streamer';\n" . ($before_line . $call{$_}) x 100000 } @kinds);
# until the server's clock is 3 s past midnight (real time runs with it)
my $deadline = time() + 30;
usleep(100_000) while time() < $deadline && server_clock($node) < $midnight + 3;
$node->safe_psql('postgres',
	q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'streamer'});
stop_clients($clients, 30);
is(join('', grep { /ERROR/ } split /^/, client_errors($clients)), '',
	'the clients saw no error (but their termination)');

# Per sequence: [first, last, t_before, t_after] of every call answered.
my %got = (tab => [], gap => []);
for my $i (0 .. $#kinds)
{
	my $seq = $kinds[$i] eq 'gap' ? 'gap' : 'tab';
	my $t0;
	for (client_lines([ $clients->[$i] ]))
	{
		my @f = split /\|/;
		if ($f[0] eq 'b') { $t0 = $f[1]; }
		elsif ($f[0] eq 'n' && defined $t0) { push @{ $got{$seq} }, [ $f[1], $f[1], $t0, $f[2] ]; }
		elsif ($f[0] eq 'r' && defined $t0) { push @{ $got{$seq} }, [ $f[1], $f[2], $t0, $f[3] ]; }
	}
}
for my $seq ('tab', 'gap')
{
	my @r = @{ $got{$seq} };
	my (@old, @new, $badkey, $early, $late, $span);
	($badkey, $early, $late, $span) = (0, 0, 0, 0);
	for my $r (@r)
	{
		my ($k, $c) = (int($r->[0] / $scale), $r->[0] % $scale);
		$span++ if int($r->[1] / $scale) != $k || $r->[1] - $r->[0] != 2 && $r->[1] != $r->[0];
		if ($k == $before)
		{
			push @old, $c .. $c + $r->[1] - $r->[0];
			$late++ if $r->[2] >= $midnight;     # began after midnight
		}
		elsif ($k == $after)
		{
			push @new, $c .. $c + $r->[1] - $r->[0];
			$early++ if $r->[3] < $midnight;     # ended before midnight
		}
		else
		{
			$badkey++;
		}
	}
	note(sprintf('%s: %d calls, %d numbers of %s, %d of %s', $seq, scalar @r,
		scalar @old, $before, scalar @new, $after));
	cmp_ok(scalar @old, '>', 0, "$seq: numbers of the day before midnight were handed out");
	cmp_ok(scalar @new, '>', 0, "$seq: numbers of the new day were handed out");
	is($badkey, 0, "$seq: every number has the key of the day before or of the new day");
	is($span, 0, "$seq: every block lies in one day (3 numbers, or 1)");
	is($late, 0, "$seq: no number of the day before from a call that began after midnight");
	is($early, 0, "$seq: no number of the new day from a call that ended before midnight");
	is(range_overlap([ map { [ $_->[0], $_->[1] ] } @r ], []), 0, "$seq: no number handed out twice");
	my @sorted = sort { $a <=> $b } @new;
	is($sorted[0], 1, "$seq: the new day counts from start (1)");
	if ($seq eq 'gap')
	{
		is($sorted[-1], scalar @sorted, "gap: the new day's counts have no gap (1 to $sorted[-1])");
		my @o = sort { $a <=> $b } @old;
		is($o[-1] - $o[0] + 1, scalar @o, 'gap: the counts of the day before have no gap');
	}
}

######## (b) the clock behind midnight again, then forward again
my $row_sql = q{SELECT string_agg(concat_ws(',', name, next_block_start, period, exhausted, reset_skip), ';' ORDER BY name) FROM id_sequences};
my $rows = $node->safe_psql('postgres', $row_sql);
my ($tab_next, $gap_next) = split /\n/, $node->safe_psql('postgres',
	q{SELECT next_block_start FROM id_sequences WHERE name IN ('tab', 'gap') ORDER BY name = 'gap'});
# gapless numbers: the backends' clock stepped back 30 s
clock_off($fake, -30);
$clock = server_clock($node);
ok($clock < $midnight, sprintf('precondition: the clock stepped back to %.1f s before midnight', $midnight - $clock));
for my $sql (q{SELECT seq_next('gap')}, q{SELECT * FROM seq_reserve_block('gap', 2)})
{
	my ($err, $ret) = psql_error($node, $sql);
	like($err, qr/22008.*block sequence "gap" counts in a period that has not begun by the clock/s,
		"clock behind the row's period: $sql fails with 22008");
}
clock_off($fake, 0);
# the allocator's numbers: the row's zone 30 s behind
my ($zone_back) = zone_ending_at($midnight + 30);
$node->safe_psql('postgres', "UPDATE id_sequences SET time_zone = '$zone_back' WHERE name = 'tab'");
for my $sql (q{SELECT seq_next('tab')}, q{SELECT * FROM seq_reserve_block('tab', 3)})
{
	my ($err, $ret) = psql_error($node, $sql);
	like($err, qr/22008.*block sequence "tab" counts in a period that has not begun by the clock/s,
		"clock behind the row's period (allocator): $sql fails with 22008");
}
cmp_ok(time(), '<', $midnight + 30, "precondition: the zone $zone_back was still before its midnight");
is($node->safe_psql('postgres', $row_sql), $rows, 'and id_sequences did not change');
$node->safe_psql('postgres', "UPDATE id_sequences SET time_zone = '$zone' WHERE name = 'tab'");
is($node->safe_psql('postgres', q{SELECT seq_next('tab')}), $after * $scale + $tab_next,
	'clock forward again: seq_next() of "tab" goes on where the row was');
is($node->safe_psql('postgres', q{SELECT seq_next('gap')}), $after * $scale + $gap_next,
	'and gapless numbers too');

######## (c) the allocator killed after committing the restart of a period
$node->safe_psql('postgres',
	qq{UPDATE id_sequences SET period = $before, next_block_start = 50 WHERE name = 'cr'});
my $offset = -s $node->logfile;
set_crash_point($node, 'alloc-after-commit');
my ($err, $ret) = psql_error($node, q{SELECT seq_next('cr')});
isnt($ret, 0, 'the seq_next() whose allocator round was killed failed');
wait_crash_restart($node, 'alloc-after-commit', $offset);
set_crash_point($node, '');
# the round that restarted the count committed a cache refill from count 1
# (a block), which the crash lost: a gap, never a repeat
my ($cr_period, $cr_next) = split /,/,
  $node->safe_psql('postgres', q{SELECT period || ',' || next_block_start FROM id_sequences WHERE name = 'cr'});
is($cr_period, $after, 'after the crash restart the row counts in the new day (the restart committed)');
cmp_ok($cr_next, '>', 1, "and past the range committed with the restart (next_block_start $cr_next)");
my @cr = split /\n/, $node->safe_psql('postgres', q{SELECT seq_next('cr') FROM generate_series(1, 3)});
is_deeply(\@cr, [ map { $after * $scale + $_ } $cr_next .. $cr_next + 2 ],
	'and the count goes on from there, none of the lost range twice');

######## (d) pg_dump and pg_restore
$node->safe_psql('postgres', q{
	CREATE DATABASE src;
	CREATE DATABASE dst;
});
$node->safe_psql('src', qq{
	CREATE EXTENSION uidgen;
	SELECT seq_create('dp', reset => 'day', max_value => 9999999, start => 3, increment => 2,
	                  time_zone => '$zone');
	SELECT seq_next('dp') FROM generate_series(1, 4);
	UPDATE id_sequences SET reset_skip = 7 WHERE name = 'dp';
});
my $dump = $node->basedir . '/period.dump';
my $dp_sql = q{SELECT concat_ws(',', reset, period, reset_skip, next_block_start, time_zone, max_value, increment) FROM id_sequences WHERE name = 'dp'};
my $dp_row = $node->safe_psql('src', $dp_sql);
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('src') ], 'pg_dump');
command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('dst'), $dump ],
	'pg_restore into a new database');
is($node->safe_psql('dst', $dp_sql), $dp_row, "the restored row keeps reset, period and reset_skip ($dp_row)");
my @src = split /\n/, $node->safe_psql('src', q{SELECT seq_next('dp') FROM generate_series(1, 2)});
my @dst = split /\n/, $node->safe_psql('dst', q{SELECT seq_next('dp') FROM generate_series(1, 2)});
is_deeply(\@dst, \@src, 'the restored sequence goes on where the dumped one was (3 + 4 * 2 on)');
# (the dumped next_block_start: the end of what the cache had reserved)
my $dp_next = (split /,/, $dp_row)[3];
cmp_ok($dp_next, '>=', 11, 'the dumped row is past the 4 numbers handed out (3, 5, 7, 9)');
is($dst[0], $after * $scale + $dp_next, "the first number after the restore is count $dp_next, past them");
$node->stop;

######## (e) promotion shortly before midnight
my $skip = 100;
my $primary = uidgen_node('period_primary', init => { allows_streaming => 1 },
	'uidgen.promotion_skip' => $skip);
$primary->safe_psql('postgres', q{
	SELECT seq_create('pd', reset => 'day', max_value => 9999999, start => 5, increment => 3);
	SELECT seq_create('po', reset => 'day', max_value => 9999999, start => 2);
	SELECT seq_next('pd') FROM generate_series(1, 3);
	SELECT seq_next('po') FROM generate_series(1, 3);
});
# (the end of what the primary's cache reserved)
my $pd_next = $primary->safe_psql('postgres', q{SELECT next_block_start FROM id_sequences WHERE name = 'pd'});
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('period_standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$standby->start;
$primary->wait_for_catchup($standby);
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
# Before anything asks for a block (the skip comes with the first): the
# rows' day ends in a few seconds (their zone moved), 'pd' counts in it,
# 'po' in the day before (ended).
my $m2 = floor(time()) + 6;
my ($z2, $k1, $k2) = zone_ending_at($m2);
$standby->safe_psql('postgres', qq{
	UPDATE id_sequences SET time_zone = '$z2', period = $k1 WHERE name = 'pd';
	UPDATE id_sequences SET time_zone = '$z2', next_block_start = 40,
	       period = seq_period_key('day', '$z2', now() - interval '1 day') WHERE name = 'po';
});
my $pd1 = $standby->safe_psql('postgres', q{SELECT seq_next('pd')});
my $po1 = $standby->safe_psql('postgres', q{SELECT seq_next('po')});
my $skips = $standby->safe_psql('postgres',
	q{SELECT string_agg(name || ':' || reset_skip, ',' ORDER BY name) FROM id_sequences});
cmp_ok(time(), '<', $m2, sprintf('precondition: promoted and skipped %.1f s before midnight', $m2 - time()));
is($pd1, $k1 * $scale + $pd_next + $skip * 3,
	'promoted: a row of the current day skips ahead by skip * increment');
is($po1, $k1 * $scale + 2 + $skip,
	'promoted: a row whose period had ended restarts at start + skip');
is($skips, "pd:$skip,po:$skip", 'within the hour before midnight the skip sets reset_skip = promotion_skip');
sleep_until($m2 + 0.2);
my @pd = split /\n/, $standby->safe_psql('postgres', q{SELECT seq_next('pd') FROM generate_series(1, 2)});
is_deeply(\@pd, [ $k2 * $scale + 5 + $skip * 3, $k2 * $scale + 5 + $skip * 3 + 3 ],
	'after midnight the new day counts from start + skip * increment');
is($standby->safe_psql('postgres', q{SELECT seq_next('po')}), $k2 * $scale + 2 + $skip,
	'and so does the row restarted at the promotion');
is($standby->safe_psql('postgres',
	q{SELECT string_agg(name || ':' || reset_skip, ',' ORDER BY name) FROM id_sequences}),
	'pd:0,po:0', 'the restart consumed reset_skip');
$standby->stop;

done_testing();
