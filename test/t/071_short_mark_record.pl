# Guarantee: WAL replay refuses a uidgen mark record of the wrong length
# (clock/walmark.c): the standby stops with a PANIC that says so (SQLSTATE
# XX001, the length found and expected), instead of taking 8 bytes of mark
# and whatever follows them as the origin's mark and worker id, and it stops
# again at the same record when restarted.  The primary of a test build
# writes its mark records 8 bytes short while the fault "mark-record-short"
# is armed (src/core/crashpoint.c).  Likewise a record of an op code uidgen
# has not (fault "mark-record-op", op code 0x10): a second standby stops
# at it with a PANIC that names the op code.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;
use lib 'test';
use UidgenTest;

my $primary = uidgen_node('primary', init => { allows_streaming => 1 },
	'uidgen.worker_id' => 1);
$primary->safe_psql('postgres', 'SELECT snowflake_next()');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "log_error_verbosity = verbose\n");
$standby->start;
$primary->wait_for_catchup($standby);
is(uidgen_status($standby)->{origin_worker_id}, '1',
	'the standby replays whole mark records (origin worker id 1)');

# IDs move the mark (by the keeper, about once a second, or the backend).
my $offset = -s $standby->logfile;
arm_crash_point($primary, 'mark-record-short');
my $panic = qr/PANIC:\s+XX001: uidgen redo: mark record of 8 bytes, expected 16/;
my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
while (Time::HiRes::time() < $deadline)
{
	last if count_in_log($standby, $panic, $offset);
	$primary->safe_psql('postgres', 'SELECT snowflake_next(); SELECT pg_sleep(0.5)');
}
ok(count_in_log($standby, $panic, $offset),
	'the standby stops at a short mark record: PANIC XX001 with both lengths');
ok(wait_for_log($standby,
		qr/startup process .* was terminated|startup process .* exited with exit code|terminated by signal 6/,
		$offset),
	'its startup process is gone');
ok(wait_for_server_exit($standby), 'the standby is down');
like(slurp_file($standby->logfile),
	qr/DETAIL:\s+The record was not written by this version of uidgen, or the WAL is damaged\./,
	'the detail says why');

# Restarted: the record is still there; replay stops at it again.
disarm_crash_point($primary);
$offset = -s $standby->logfile;
# (pg_ctl itself, whatever it answers: the standby can stop before
# PostgreSQL::Test::Cluster's start() reads its pid file, which start()
# takes for a broken test even with fail_ok)
PostgreSQL::Test::Utils::system_log('pg_ctl', '-D', $standby->data_dir,
	'-l', $standby->logfile, '-w', 'start');
ok(wait_for_log($standby, $panic, $offset),
	'restarted, the standby stops at the same record');
$deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
Time::HiRes::usleep(100_000)
  while -e $standby->data_dir . '/postmaster.pid' && Time::HiRes::time() < $deadline;
ok(!-e $standby->data_dir . '/postmaster.pid', 'and is down again');

# An op code uidgen has not: a second standby, made after the short records.
$primary->backup('b2');
my $standby2 = PostgreSQL::Test::Cluster->new('standby2');
$standby2->init_from_backup($primary, 'b2', has_streaming => 1);
$standby2->start;
$primary->wait_for_catchup($standby2);
$offset = -s $standby2->logfile;
arm_crash_point($primary, 'mark-record-op');
my $op_panic = qr/PANIC:\s+uidgen redo: unknown op code 16/;
$deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
while (Time::HiRes::time() < $deadline)
{
	last if count_in_log($standby2, $op_panic, $offset);
	$primary->safe_psql('postgres', 'SELECT snowflake_next(); SELECT pg_sleep(0.5)');
}
ok(count_in_log($standby2, $op_panic, $offset),
	'the standby stops at a mark record of an unknown op code: PANIC naming it (16)');
ok(wait_for_server_exit($standby2), 'that standby is down');
disarm_crash_point($primary);

$primary->stop;
done_testing();
