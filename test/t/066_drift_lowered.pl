# Guarantee: the durable high-water mark never moves down, also when
# uidgen.max_clock_drift is lowered by a reload.  A backend that has not
# reloaded yet still issues IDs up to the old, larger drift ahead; had the
# mark's window followed the setting (0.1.0 wrote it max(2 s, 2 x drift)
# ahead), a lower mark written by another process after the reload could
# let a crash repeat them.  The window is now a fixed 2 s.
#
# Here the first mark is written under a 10 s drift, the setting is lowered
# to 1 ms, and 11 s later the clock passes the refresh point again: the
# next mark must not be below the first one, in shared memory and in the
# file.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('drift_lowered', 'uidgen.max_clock_drift' => '10s');
$node->safe_psql('postgres', 'SELECT snowflake_next()');
my $first = read_state_file($node);
my $mark1 = $first->{hwm};
my $status1 = $node->safe_psql('postgres', 'SELECT high_water_mark FROM uidgen_status()');
ok($mark1 > 0, 'a mark is written under the 10 s drift');

$node->safe_psql('postgres', q{
	ALTER SYSTEM SET uidgen.max_clock_drift = '1ms';
	SELECT pg_reload_conf()});
$node->poll_query_until('postgres', q{SELECT current_setting('uidgen.max_clock_drift') = '1ms'});

# Past the refresh point of the first mark (half of 0.1.0's 20 s window),
# IDs make the keeper write the file again.  (Time must pass: the real
# clock has to reach that point.)
sleep(11);
$node->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 1000)');
ok(wait_until(sub { read_state_file($node)->{saved_at} != $first->{saved_at} }),
	'the state file was written again after the reload');
my $mark2 = read_state_file($node)->{hwm};
ok($mark2 >= $mark1, 'the mark in the file did not move down')
  or diag(sprintf('first %d, then %d: %.3f s lower', $mark1, $mark2,
		($mark1 - $mark2) / (1 << 20) / 1000));
cmp_ok(
	$node->safe_psql('postgres', qq{
		SELECT high_water_mark >= '$status1' FROM uidgen_status()}),
	'eq', 't', 'uidgen_status().high_water_mark did not move down');

$node->stop;
done_testing();
