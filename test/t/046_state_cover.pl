# Guarantee: no ID is returned before the mark that covers it is on disk,
# whether or not the keeper is running.  The keeper normally writes the
# mark long before the clock reaches it, so a crash never lands in the gap;
# here the keeper is held with SIGSTOP instead, and the clock is driven past
# the mark: the backends must write the mark themselves, synchronously,
# before they hand out an ID beyond it, and must not stall.
#
# While the keeper is stopped nothing else writes the state file, so the
# file read right after each call shows what was durable when it returned.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test';
use UidgenTest;

my $node = uidgen_node('cover', fsync => 'on');

# The process state letter (T when stopped).
sub proc_state
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return '';
	my $stat = <$fh>;
	close $fh;
	return $stat =~ /^\d+ \(.*\) (\S)/ ? $1 : '';
}

# The first call writes the mark itself, or wakes the keeper to move it;
# then the server stays idle, and once the mark in shared memory is more
# than half a window (1 s) above the IDs handed out, the keeper has nothing
# to write (it then holds uidgen's lock only for an instant per second, and
# is stopped outside it).
my ($id0, $u0) = split /\|/,
  $node->safe_psql('postgres', 'SELECT snowflake_next(), uuidv7_next()');
my $keeper;
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
until (defined($keeper = keeper_pid($node)) || time > $deadline)
{
	usleep(50_000);
}
ok(defined $keeper, 'found the keeper process') or BAIL_OUT('no keeper');
my $last0 = snowflake_ms($id0) > uuid_ms($u0) ? snowflake_ms($id0) : uuid_ms($u0);
wait_until(sub {
	$node->safe_psql('postgres',
		'SELECT extract(epoch FROM high_water_mark) * 1000 FROM uidgen_status()')
	  - 1000 >= $last0 + 1;
}) or BAIL_OUT('the mark was not moved past the first IDs');

kill 'STOP', $keeper;
END { kill 'CONT', $keeper if $keeper; }
$deadline = time + $PostgreSQL::Test::Utils::timeout_default;
usleep(10_000) until proc_state($keeper) eq 'T' || time > $deadline;
is(proc_state($keeper), 'T', 'the keeper is stopped');
my $mark0 = read_state_file($node)->{hwm_ms};

# Generate for 4.5 s, more than two windows (2 s) of clock: from the end
# of the first call to the start of the last (on a loaded machine one call
# can take a second or more).  After each call, the mark on disk must
# cover the IDs it returned.
my ($calls, @beyond, $first_ms, $last_ms, $max_id, $max_u, $t0) = (0);
for (;;)
{
	my $started = time;
	my @rows = map { [ split /\|/ ] } split /\n/, $node->safe_psql('postgres',
		'SELECT snowflake_next(), uuidv7_next() FROM generate_series(1, 20)',
		timeout => 60);
	my $disk = read_state_file($node)->{hwm_ms};
	$calls++;
	for my $r (@rows)
	{
		my ($sf, $uu) = (snowflake_ms($r->[0]), uuid_ms($r->[1]));
		push @beyond, "snowflake $r->[0] ($sf ms) > mark $disk" if $sf > $disk;
		push @beyond, "uuid $r->[1] ($uu ms) > mark $disk" if $uu > $disk;
		$first_ms //= $sf;
		$last_ms = $sf;
	}
	$max_id = max_snowflake($max_id, map { $_->[0] } @rows);
	$max_u = max_uuid($max_u, map { $_->[1] } @rows);
	$t0 //= time;
	last if $started >= $t0 + 4.5;
	usleep(20_000);    # (the clock moves between calls)
}
is(proc_state($keeper), 'T', 'the keeper stayed stopped throughout');
ok(!@beyond, "every ID returned was at or below the mark on disk ($calls calls)")
  or diag(scalar(@beyond) . " beyond, first: $beyond[0]");
cmp_ok($last_ms - $first_ms, '>=', 3000,
	'generation did not stall while the keeper was stopped');
my $mark1 = read_state_file($node)->{hwm_ms};
cmp_ok($mark1, '>', $mark0 + 2000,
	'the backends moved the mark on disk past the one the keeper left');

kill 'CONT', $keeper;
$node->restart;
my ($id, $u) = split /\|/,
  $node->safe_psql('postgres', 'SELECT snowflake_next(), uuidv7_next()');
ok($id > $max_id && $u gt $max_u, 'after a restart, IDs continue above');
$node->stop;
done_testing();
