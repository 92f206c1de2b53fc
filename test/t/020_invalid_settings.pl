# Guarantee: the server refuses to start with settings that cannot produce
# valid, unique snowflake IDs (layout wider than 22 bits, a worker id that
# does not fit its bits, an out-of-range value, an epoch that is no
# timestamp, is infinite or past the timestamp range, or is before 1970), naming the problem in the log; and a valid
# custom layout and epoch produce IDs whose fields decode to exactly the
# configured worker id, a sequence within its bits and the current time.
# A misspelt uidgen.* setting stops the server, naming the nearest one; and
# a server with no worker id (neither uidgen.worker_id nor a registry)
# refuses snowflake_next() instead of generating as worker 0.  An epoch
# after the current time: snowflake_next() fails with 22008.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('invalid', start => 0);
my $conf = slurp_file($node->data_dir . '/postgresql.conf');

# Start with extra settings; true if the server came up.
sub try_start
{
	my ($settings, $keep) = @_;
	open my $fh, '>', $node->data_dir . '/postgresql.conf' or die $!;
	print $fh $conf, $settings;
	close $fh;
	my $offset = -s $node->logfile // 0;
	my $up = $node->start(fail_ok => 1);
	my $log = slurp_file($node->logfile, $offset);
	$node->stop if $up && !$keep;
	return ($up, $log);
}

my ($up, $log);

($up, $log) = try_start("uidgen.worker_bits = 12\nuidgen.sequence_bits = 11\n");
ok(!$up, 'worker_bits + sequence_bits = 23: server refuses to start');
like($log,
	qr/FATAL:\s+uidgen\.worker_bits \+ uidgen\.sequence_bits must not exceed 22/,
	'log names the layout problem');

($up, $log) = try_start("uidgen.worker_bits = 5\nuidgen.worker_id = 32\n");
ok(!$up, 'worker_id 32 with 5 worker bits: server refuses to start');
like($log, qr/FATAL:\s+uidgen\.worker_id 32 does not fit in 5 worker bits/,
	'log names the worker id problem');

($up, $log) = try_start("uidgen.worker_bits = 0\nuidgen.worker_id = 1\n");
ok(!$up, 'worker_id 1 with 0 worker bits: server refuses to start');
like($log, qr/FATAL:\s+uidgen\.worker_id 1 does not fit in 0 worker bits/,
	'log names the worker id problem (0 bits)');

# Values PostgreSQL itself rejects (range check, check hook, unparsable):
# PostgreSQL only logs a WARNING saying why and would fall back to the
# built-in default (worker id 0, epoch 2024-01-01, ...), which could repeat
# another server's IDs; uidgen refuses to start instead, with a FATAL that
# quotes the configured value, right after PostgreSQL's WARNING.
my @rejected = (
	[ 'uidgen.epoch', 'not a timestamp', 'unparsable epoch' ],
	[ 'uidgen.epoch', '1969-12-31 23:59:59+00', 'epoch before 1970' ],
	[ 'uidgen.epoch', join(' ', 1 .. 30), 'epoch of 30 fields', qr/is not a valid timestamp/ ],
	[ 'uidgen.epoch', 'infinity', 'infinite epoch', qr/is not a valid timestamp/ ],
	[ 'uidgen.epoch', '300000-01-01 00:00:00+00', 'epoch past the timestamp range',
		qr/is not a valid timestamp/ ],
	[ 'uidgen.worker_bits', '23', 'worker_bits 23' ],
	[ 'uidgen.worker_bits', 'ten', 'unparsable worker_bits' ],
	[ 'uidgen.sequence_bits', '21', 'sequence_bits 21' ],
	[ 'uidgen.sequence_bits', '-1', 'sequence_bits -1' ],
	[ 'uidgen.worker_id', '4194304', 'worker_id 2^22' ],
	[ 'uidgen.worker_id', '-1', 'worker_id -1' ],
	[ 'uidgen.worker_id', '7x', 'unparsable worker_id' ]);
for my $case (@rejected)
{
	my ($param, $value, $name, $detail) = @$case;
	($up, $log) = try_start("$param = '$value'\n");
	ok(!$up, "$name: server refuses to start");
	like($log, qr/DETAIL:\s+[^\n]*$detail/, "$name: the DETAIL says why") if $detail;
	my $fatal_re = qr/FATAL:\s+invalid value for parameter "\Q$param\E": "\Q$value\E"/;
	like($log, $fatal_re, "$name: FATAL names the setting and the value");
	my $fatal_at = $log =~ $fatal_re ? $-[0] : -1;
	my $warning_at = $log =~ /WARNING:\s+[^\n]*\Q$param\E/ ? $-[0] : -1;
	ok($warning_at >= 0 && $warning_at < $fatal_at,
		"$name: PostgreSQL's WARNING explaining why comes before the FATAL")
	  or diag($log);
	unlike($log, qr/database system is ready to accept connections/,
		"$name: the server never accepted connections");
}

# Boundary: 22 layout bits are accepted.
($up, $log) = try_start("uidgen.worker_bits = 2\nuidgen.sequence_bits = 20\nuidgen.worker_id = 3\n");
ok($up, 'worker_bits 2 + sequence_bits 20 = 22: server starts');

# A valid custom layout and epoch, in a fresh ID space: the servers above
# recorded other settings in the state file (a later epoch is refused, see
# 060_settings_change.pl).  Another module's setting, unknown to this
# server, is left alone (only misspelt uidgen.* settings stop it).
unlink($node->data_dir . '/uidgen.state');
($up, $log) = try_start(
	"uidgen.worker_bits = 5\nuidgen.sequence_bits = 8\nuidgen.worker_id = 31\n"
	  . "uidgen.epoch = '2025-06-01 00:00:00+00'\nmyapp.mode = 'on'\n", 1);
ok($up, 'custom layout: server starts');
is($node->safe_psql('postgres', q{SELECT current_setting('myapp.mode')}),
	'on', "another module's setting (myapp.mode) is kept as a placeholder");
$node->safe_psql('postgres', 'CREATE EXTENSION uidgen');
my $st = uidgen_status($node);
is( join(',', @$st{qw(state worker_id timestamp_bits worker_bits sequence_bits epoch)}),
	'ok,31,50,5,8,2025-06-01 00:00:00+00',
	'uidgen_status() shows the custom layout');

# 3000 IDs: more than the 256 a millisecond holds, so the sequence wraps
# into the next millisecond.  Decode by hand and with the decoders.
$node->safe_psql('postgres', q{
	CREATE TABLE ids AS
	SELECT n, snowflake_next() AS id, clock_timestamp() AS t
	FROM generate_series(1, 3000) n});
is( $node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE (id >> 8) & 31 <> 31),
	       count(*) FILTER (WHERE snowflake_worker(id) <> 31),
	       count(*) FILTER (WHERE snowflake_sequence(id) <> (id & 255)),
	       count(*) FILTER (WHERE snowflake_timestamp(id) <>
	           '2025-06-01 00:00:00+00'::timestamptz + (id >> 13) * interval '1 ms'),
	       count(*) FILTER (WHERE id <= 0)
	FROM ids}),
	'0|0|0|0|0',
	'every ID carries worker 31, and the decoders agree with the bit layout');
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s
	WHERE prev >= id}),
	'0', 'IDs strictly increase in generation order');
is( $node->safe_psql('postgres', q{
	SELECT max(snowflake_sequence(id)) = 255 AND count(DISTINCT id >> 13) >= 12
	FROM ids}),
	't', 'the 8-bit sequence is used up to 255 and overflows into later milliseconds');
# Timestamps: within the drift bound of the time of the call (this is the
# first start with this state file, so the clock starts at the wall clock).
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM ids
	WHERE snowflake_timestamp(id) < date_trunc('milliseconds', t) - interval '50 ms'
	   OR snowflake_timestamp(id) > t + interval '1 s'}),
	'0', 'decoded timestamps match the time of generation (within the drift bound)');
is( $node->safe_psql('postgres',
		q{SELECT snowflake_floor('2025-06-01 00:00:00.005+00') = (5::bigint << 13)}),
	't', 'snowflake_floor uses the custom epoch and layout');

# A reload re-reads the uidgen.epoch line: the setting's parsed value must
# be allocated the way the GUC machinery frees it (PostgreSQL 16 and later
# free it with pfree(), and a malloc()ed one took the server down).
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
$node->append_conf('postgresql.conf', "uidgen.max_clock_drift = '2s'\n");
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
$node->poll_query_until('postgres',
	q{SELECT current_setting('uidgen.max_clock_drift') = '2s'});
is( $node->safe_psql('postgres',
		q{SELECT current_setting('uidgen.epoch') = '2025-06-01 00:00:00+00' AND snowflake_next() > 0}),
	't', 'two reloads with an epoch line: the server runs on, epoch unchanged');

$node->stop;

# A misspelt setting: PostgreSQL only warns and drops it, which for
# "uidgen.workerid" would leave the server without its worker id.
($up, $log) = try_start("uidgen.workerid = 5\n");
ok(!$up, 'a misspelt uidgen.workerid: server refuses to start');
like($log, qr/FATAL:\s+(?:42704:\s+)?unrecognized configuration parameter "uidgen\.workerid"/,
	'the FATAL names the misspelt setting');
like($log, qr/HINT:\s+Perhaps you meant "uidgen\.worker_id"\./,
	'and the hint the setting it was meant to be');
# In capitals too: PostgreSQL reserves the prefix case-sensitively and
# would keep "UIDGEN.WORKERID" without a word, and the server would run
# on the worker id set before it.
($up, $log) = try_start("uidgen.worker_id = 1\nUIDGEN.WORKERID = 5\n");
ok(!$up, 'a misspelt setting in capitals: server refuses to start');
like($log, qr/FATAL:\s+(?:42704:\s+)?unrecognized configuration parameter "UIDGEN\.WORKERID"/,
	'the FATAL names it as written');
like($log, qr/HINT:\s+Perhaps you meant "uidgen\.worker_id"\./,
	'and the hint the setting it was meant to be');
# ...while the right name in capitals is the setting (GUC names ignore case)
($up, $log) = try_start("uidgen.worker_id = 1\nUIDGEN.WORKER_ID = 5\n", 1);
ok($up, 'uidgen.worker_id in capitals: the server starts');
is($node->safe_psql('postgres', 'SELECT snowflake_worker(snowflake_next())'),
	'5', 'and generates under the worker id it sets');
$node->stop;
($up, $log) = try_start("uidgen.no_such_thing_at_all = on\n");
ok(!$up, 'an unknown uidgen.* setting: server refuses to start');
like($log, qr/HINT:\s+Remove it from the configuration/,
	'with no setting near it, the hint says to remove it');

# An epoch after the current time: the server starts, and snowflake_next()
# refuses (22008) instead of handing out a negative ID, saying what the
# layout covers; UUIDs are not affected.
# (a new ID space: the state file of the IDs issued above goes)
unlink $node->data_dir . '/uidgen.state' or die "unlink: $!";
($up, $log) = try_start("uidgen.epoch = '2200-01-01 00:00:00+00'\n", 1);
ok($up, 'an epoch in the future: the server starts');
my $ferr = psql_error($node, 'SELECT snowflake_next()');
like($ferr,
	qr/ERROR:\s+22008:\s+current time is outside the range of snowflake IDs.*DETAIL:\s+With the epoch '2200-01-01 [^']+' and 41 timestamp bits, snowflake IDs cover instants up to 2269-09-07 /s,
	'an epoch in the future: snowflake_next() fails with 22008, naming the epoch and the last instant (2^41 ms later; not the epoch twice)');
like($node->safe_psql('postgres', 'SELECT uuidv7_next()'), qr/^[0-9a-f-]{36}$/,
	'an epoch in the future: uuidv7_next() works');
$node->stop;

# No worker id chosen: IDs issued before (as with 0.2.0's default of 0)
# are not repeated, snowflake_next() is refused until one is set, and
# everything else works.
my $u = uidgen_node('unset');
my $before = $u->safe_psql('postgres', 'SELECT max(snowflake_next()) FROM generate_series(1, 1000)');
$u->stop;
my $uconf = slurp_file($u->data_dir . '/postgresql.conf');
$uconf =~ s/^uidgen\.worker_id = .*\n//mg;
open my $ufh, '>', $u->data_dir . '/postgresql.conf' or die $!;
print $ufh $uconf;
close $ufh;
$u->start;
my $err = psql_error($u, 'SELECT snowflake_next()');
like($err, qr/ERROR:\s+55000:\s+uidgen\.worker_id is not set/,
	'no worker id: snowflake_next() refused (55000)');
like($err, qr/HINT:\s+Set uidgen\.worker_id to a number from 0 to 1023 that no other such server uses/,
	'the hint says what to set');
my $ust = uidgen_status($u);
is("$ust->{state}|$ust->{worker_id}", 'no worker id|',
	'uidgen_status(): state "no worker id", worker_id NULL');
like($u->safe_psql('postgres', 'SELECT uuidv7_next()'), qr/^[0-9a-f-]{36}$/,
	'uuidv7_next() works without a worker id');
like(psql_error($u, 'SELECT snowflake_at(now(), 0, 0)'), qr/^$/,
	'a backfill with worker id 0 is not refused as this server\'s own');
$u->append_conf('postgresql.conf', "uidgen.worker_id = 0\n");
$u->restart;
cmp_ok($u->safe_psql('postgres', 'SELECT snowflake_next()'), '>', $before,
	'worker id 0 set explicitly: generation resumes above what was issued');
$u->stop;
done_testing();
