# Guarantee: if the server restarts with its wall clock an hour behind the
# time of its last IDs, it never repeats or goes below an earlier ID: the
# clock resumes above the durable high-water mark, IDs run ahead of the
# (wrong) wall clock, generation does not wait for the wall clock to catch
# up, and the step is reported (a WARNING in the log and
# uidgen_status().clock_backward_episodes = 1).  The same after a second
# clean restart, and after a crash, while the clock is still behind.
#
# The server's clock is shifted with libfaketime (monotonic clocks left
# alone, as uidgen measures real time with them).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

plan skip_all => 'libfaketime is not installed' unless faketime_available();

my $node = uidgen_node('clock_back');
my $fake = $node->basedir . '/faketime';

# IDs before the restart (a few hundred thousand, so the clock is ahead).
my ($old_id, $old_u) = split /\|/, $node->safe_psql('postgres', q{
	SELECT id, u FROM (SELECT snowflake_next() AS id, uuidv7_next() AS u
	FROM generate_series(1, 200000)) s ORDER BY id DESC LIMIT 1});
my $old_ts = $node->safe_psql('postgres', "SELECT snowflake_timestamp($old_id)");
$node->stop;

# Restart one hour in the past.
faketime_set($fake, '-3600');
my $log_offset = -s $node->logfile;
start_faked($node, $fake);
ok(!defined $ENV{LD_PRELOAD}, 'the test itself does not run under libfaketime');
my $server_lag = $node->safe_psql('postgres',
	'SELECT extract(epoch FROM clock_timestamp())') - time();
cmp_ok(abs($server_lag + 3600), '<', 10,
	"the server's wall clock is an hour behind (by ${server_lag}s)");

my $log = slurp_file($node->logfile, $log_offset);
my ($behind) = $log =~
  /WARNING:\s+system clock is (\d+\.\d{3}) s behind the time uidgen last saved its state/;
ok(defined $behind, 'start-up warns that the clock is behind the saved state');
cmp_ok($behind // 0, '>', 3500, 'the warning gives the size of the step (> 3500 s)');
cmp_ok($behind // 0, '<', 3610, 'the warning gives the size of the step (< 3610 s)');

my $st = uidgen_status($node);
is($st->{state}, 'ok', 'state is ok');
is($st->{clock_backward_episodes}, '1', 'one clock-backward episode counted at start-up');

# Generate: every ID above the old ones, promptly, without waits.
my $t0 = time();
my $res = $node->safe_psql('postgres', q{
	CREATE TABLE ids AS
	SELECT n, snowflake_next() AS id, uuidv7_next() AS u, clock_timestamp() AS t
	FROM generate_series(1, 50000) n;
	SELECT min(id), (SELECT u FROM ids ORDER BY n LIMIT 1) FROM ids});
my $elapsed = time() - $t0;
my ($min_id, $first_u) = split /\|/, $res;
ok($min_id > $old_id, 'every snowflake ID after the restart is above the old ones')
  or diag("new min $min_id, old max $old_id");
ok($first_u gt $old_u, 'the first UUIDv7 after the restart is above the old ones')
  or diag("new $first_u, old max $old_u");
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT id, u, lag(id) OVER w AS pid, lag(u) OVER w AS pu
	                      FROM ids WINDOW w AS (ORDER BY n)) s
	WHERE pid >= id OR pu >= u}),
	'0', 'snowflake IDs and UUIDs keep strictly increasing');
cmp_ok($elapsed, '<', 120, "50000 IDs and UUIDs took ${elapsed}s: no wait for the clock");
is(uidgen_status($node)->{waits}, '0', 'no call waited for real time');
is( $node->safe_psql('postgres', qq{
	SELECT count(*) FROM ids
	WHERE snowflake_timestamp(id) < '$old_ts'::timestamptz
	   OR snowflake_timestamp(id) < t + interval '59 min'
	   OR uuidv7_timestamp(u) < t + interval '59 min'}),
	'0', 'ID timestamps run ahead of the server clock, above the old IDs');

# A second restart while the clock is still behind keeps all of it.
$old_id = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
$old_u = $node->safe_psql('postgres', 'SELECT u FROM ids ORDER BY u DESC LIMIT 1');
$node->stop;
start_faked($node, $fake);
my ($id2, $u2) = split /\|/,
  $node->safe_psql('postgres',
	"SET statement_timeout = '20s'; SELECT snowflake_next(), uuidv7_next()");
ok($id2 > $old_id && $u2 gt $old_u,
	'after a second restart with the clock still behind, IDs stay above');
is(uidgen_status($node)->{waits}, '0', 'still no waits');

# A crash while the clock is still behind: the mark the keeper wrote during
# the episode records real time as its save time, not the stepped-back wall
# clock (0.1.0 recorded the wall clock, so the next start saw no episode
# and every call waited an hour for the wall clock to reach the mark).
$old_id = $node->safe_psql('postgres',
	'SELECT max(snowflake_next()) FROM generate_series(1, 60000)');
my $saved_at_ms = read_state_file($node)->{saved_at_ms};
# (within a minute of now, far from the hour behind; on a loaded machine the
# keeper's last write can be seconds old: 5.2 s was seen with load 13 on 2 CPUs)
cmp_ok($saved_at_ms - int(time() * 1000), '>', -60000,
	'the mark written during the episode records real time, not the wall clock an hour behind');
kill9_and_wait($node);
start_faked($node, $fake);
my ($ret, $id3, $err) = $node->psql('postgres',
	"SET statement_timeout = '20s'; SELECT snowflake_next()");
is($ret, 0, 'after a crash with the clock still behind, IDs come without waiting for it')
  or diag($err);
cmp_ok($id3 // 0, '>', $old_id, 'and above every ID before the crash');

$node->stop;
done_testing();
