# Guarantee: when the wall clock steps backwards while the server runs,
# snowflake IDs and UUIDv7s keep strictly increasing, without errors and
# without waiting for the clock to catch up; the step is reported once per
# episode (one WARNING, clock_backward_episodes + 1, however many calls
# see it); when the clock comes back, ID timestamps follow it again.
#
# The server runs under libfaketime reading its offset from a file on every
# clock read (FAKETIME_NO_CACHE), so rewriting the file steps its clock.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

plan skip_all => 'libfaketime is not installed' unless faketime_available();

my $node = uidgen_node('clock_step', start => 0);
my $fake = $node->basedir . '/faketime';
faketime_set($fake, '+0');
start_faked($node, $fake);
$node->safe_psql('postgres', q{
	CREATE EXTENSION uidgen;
	CREATE TABLE ids (n bigserial, id bigint PRIMARY KEY, u uuid UNIQUE,
	                  t timestamptz, phase text)});

# The server's clock minus ours, in seconds.
sub server_offset
{
	return $node->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())') - time();
}

# Generate $rows IDs and UUIDs in $stmts sequential statements (a new
# session each), recording the server's clock at each call.
sub generate
{
	my ($phase, $stmts, $rows) = @_;
	for (1 .. $stmts)
	{
		$node->safe_psql('postgres', qq{
			INSERT INTO ids (id, u, t, phase)
			SELECT snowflake_next(), uuidv7_next(), clock_timestamp(), '$phase'
			FROM generate_series(1, $rows)});
	}
	return;
}

# Number of rows that break strict order (by generation order n); the
# concurrent rows are left out, as n does not give their generation order.
sub out_of_order
{
	return $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT id, u, lag(id) OVER w AS pid, lag(u) OVER w AS pu
		                      FROM ids WHERE phase <> 'concurrent'
		                      WINDOW w AS (ORDER BY n)) s
		WHERE pid >= id OR pu >= u});
}

sub episodes_re { return qr/WARNING:\s+system clock went backwards by (\d+\.\d{3}) s/; }

cmp_ok(abs(server_offset()), '<', 2, 'libfaketime at +0: server clock is right');
generate('before', 5, 20000);
my $st = uidgen_status($node);
is($st->{clock_backward_episodes}, '0', 'no episode yet');
my $waits0 = $st->{waits};

######## step back ten minutes
my $log_offset = -s $node->logfile;
faketime_set($fake, '-600');
my $off = server_offset();
cmp_ok(abs($off + 600), '<', 5, "the server's clock stepped back ten minutes ($off s)");

my $t0 = time();
generate('after_step', 20, 5000);
# Concurrent generation as well: 2 clients, unique keys enforced by ids.
$node->pgbench(
	'-n -c 2 -j 2 -t 2000', 0, [qr{processed: 4000/4000}], [qr{}],
	'concurrent generation after the step',
	{ '050_step' => q{INSERT INTO ids (id, u, t, phase) VALUES
		(snowflake_next(), uuidv7_next(), clock_timestamp(), 'concurrent');} });
generate('after_step2', 5, 5000);
my $elapsed = time() - $t0;

is(out_of_order(), '0', 'IDs and UUIDs strictly increase across the step');
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM ids WHERE phase = 'concurrent'
	  AND (id <= (SELECT max(id) FROM ids WHERE phase = 'after_step')
	       OR id >= (SELECT min(id) FROM ids WHERE phase = 'after_step2')
	       OR u <= (SELECT max(u::text)::uuid FROM ids WHERE phase = 'after_step')
	       OR u >= (SELECT min(u::text)::uuid FROM ids WHERE phase = 'after_step2'))}),
	'0', 'the concurrent IDs lie between the sequential ones before and after them');
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM ids
	WHERE phase <> 'before' AND (id <= (SELECT max(id) FROM ids WHERE phase = 'before')
	   OR u <= (SELECT max(u::text)::uuid FROM ids WHERE phase = 'before'))}),
	'0', 'every ID after the step (concurrent ones too) is above every ID before');
cmp_ok($elapsed, '<', 120, "generation after the step did not wait (${elapsed}s)");
$st = uidgen_status($node);
is($st->{waits}, $waits0, 'no call waited for real time');
is($st->{clock_backward_episodes}, '1', 'exactly one episode for one step, after many calls');
is($st->{state}, 'ok', 'state still ok');
my @warnings = slurp_file($node->logfile, $log_offset) =~ episodes_re();
is(scalar(@warnings), 1, 'one WARNING in the log for the episode');
cmp_ok($warnings[0] // 0, '>', 595, 'the WARNING gives the size of the step');
cmp_ok($warnings[0] // 0, '<', 605, 'the WARNING gives the size of the step (upper)');
# (during the episode only the IDs advance the ID clock here, as libfaketime
# seems to step the monotonic clock too (49,977 of 125,000 rows were under
# 590 s after more than 10 s of generation): with generation allowed 120 s
# above, 600 - 120 s stays above 300 s, while
# IDs on the stepped-back wall clock would be 0 s ahead; 590 s failed with
# load 13 on 2 CPUs, the generation taking more than 10 s)
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM ids WHERE phase LIKE 'after_step%'
	  AND (snowflake_timestamp(id) < t + interval '300 s'
	       OR uuidv7_timestamp(u) < t + interval '300 s')}),
	'0', 'while the clock is behind, ID timestamps stay ahead of it (real time)');

######## step forward again: timestamps follow the clock again
faketime_set($fake, '+0');
cmp_ok(abs(server_offset()), '<', 2, 'the clock is right again');
$node->poll_query_until('postgres',
	q{SELECT clock_ahead < interval '10 ms' FROM uidgen_status()})
  or diag('clock_ahead did not converge');
generate('converged', 5, 2000);
is(out_of_order(), '0', 'IDs and UUIDs still strictly increase');
# (20 ms of slack below: a backend descheduled between snowflake_next() and
# clock_timestamp() records a later t; with load 13 on 2 CPUs, 4 of 10,000
# rows were 23 to 34 ms late, so 250 ms; a clock that did not follow the
# wall clock again would be seconds or minutes off)
my $bad = $node->safe_psql('postgres', q{
	SELECT n, snowflake_timestamp(id), uuidv7_timestamp(u), t FROM ids
	WHERE phase = 'converged'
	  AND (snowflake_timestamp(id) > t + interval '1 s'
	       OR snowflake_timestamp(id) < date_trunc('milliseconds', t) - interval '250 ms'
	       OR uuidv7_timestamp(u) > t + interval '1 s'
	       OR uuidv7_timestamp(u) < date_trunc('milliseconds', t) - interval '250 ms')});
is($bad, '', 'ID timestamps follow the wall clock again');
is(uidgen_status($node)->{clock_backward_episodes}, '1',
	'stepping forward is not an episode');

######## a second step back is a new episode
# The episode ends when uidgen sees the wall clock within 10 ms of the
# logical clock; an idle server sees that through the keeper, which samples
# the clock once a second: give it two.  (Time must pass: whether an
# episode is under way is not shown anywhere a test could poll; were it
# not over, the second step would not count, and the check below fails.)
Time::HiRes::sleep(2);
$log_offset = -s $node->logfile;
faketime_set($fake, '-120');
generate('second_step', 5, 2000);
is(out_of_order(), '0', 'IDs and UUIDs strictly increase across a second step');
is(uidgen_status($node)->{clock_backward_episodes}, '2', 'a second step is a second episode');
@warnings = slurp_file($node->logfile, $log_offset) =~ episodes_re();
is(scalar(@warnings), 1, 'one WARNING for the second episode');
is(uidgen_status($node)->{waits}, $waits0, 'still no waits');

######## a step back while the server is busy is a new episode too
# Sustained load throughout: two clients generating without pause.
faketime_set($fake, '+0');
my $script = $node->basedir . '/050_load.sql';
append_to_file($script,
	"SELECT count(uuidv7_next()) FROM generate_series(1, 200);\n"
	  . "SELECT count(snowflake_next()) FROM generate_series(1, 200);\n");
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '9', '-f', $script,
	  $node->connstr('postgres') ],
	'>', \$out, '2>', \$err);
# The clock is right again, and IDs follow it (nothing runs ahead).
$node->poll_query_until('postgres',
	q{SELECT clock_ahead < interval '10 ms' FROM uidgen_status()});
Time::HiRes::sleep(3);    # (the load runs on for 3 s with the clock right)
is( $node->safe_psql('postgres',
		q{SELECT snowflake_timestamp(snowflake_next()) <= clock_timestamp() + interval '10 ms'}),
	't', 'under load, IDs follow the wall clock again');
$log_offset = -s $node->logfile;
faketime_set($fake, '-60');
# 3 s of load on the stepped-back clock (time must pass: any second
# WARNING for the one step would show up meanwhile), then until the step
# is counted and reported at all.
Time::HiRes::sleep(3);
wait_until(sub {
	uidgen_status($node)->{clock_backward_episodes} >= 3
	  && count_in_log($node, episodes_re(), $log_offset) > 0;
});
my $episodes = uidgen_status($node)->{clock_backward_episodes};
@warnings = slurp_file($node->logfile, $log_offset) =~ episodes_re();
faketime_set($fake, '+0');
ok($h->finish, 'load clients ran without error') or diag($err);
# Under continuous calls the logical clock is always at or just above the
# wall clock reading (max(now, last + 1), and the coarse clock lags), so an
# episode must end once the wall clock is within the step tolerance
# (10 ms) of the logical clock, not only at or above it; otherwise the
# first episode never ends and this step would go unreported.
is($episodes, '3', 'a step back under load is counted as a new episode');
is(scalar(@warnings), 1, 'and reported with a WARNING');
cmp_ok($warnings[0] // 0, '>', 55, 'the WARNING gives the size of the step under load');
cmp_ok($warnings[0] // 0, '<', 65, 'the WARNING gives the size of the step under load (upper)');

$node->stop;
done_testing();
