# Guarantee: uidgen.state remembers the settings IDs were issued under.  A
# restart with settings that could produce an ID at or below an issued one
# (epoch moved later, fewer worker + sequence bits) disables
# snowflake_next() (SQLSTATE 55000) until they are restored; safe changes
# (another worker id, an earlier epoch, more bits) are accepted and every
# new ID is above every old one.  State files as 0.1.0 and 0.2.0 wrote
# them (versions 2 and 3) are still read.  A corrupt state file disables every generator
# (SQLSTATE XX001), since nothing tells which IDs were issued.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('settings');
my $conf_file = $node->data_dir . '/postgresql.conf';
my $base_conf = slurp_file($conf_file);
my $state_file = $node->data_dir . '/uidgen.state';

# Every ID so far (snowflake and UUID), newest last.
my @ids;
my @uuids;

sub generate
{
	my ($n) = @_;
	my $r = $node->safe_psql('postgres', qq{
		SELECT id, u FROM (SELECT n, snowflake_next() AS id, uuidv7_next() AS u
		FROM generate_series(1, $n) n) s ORDER BY n DESC LIMIT 1});
	my ($id, $u) = split /\|/, $r;
	push @ids, $id;
	push @uuids, $u;
	return ($id, $u);
}

sub restart_with
{
	my ($settings) = @_;
	$node->stop;
	open my $fh, '>', $conf_file or die $!;
	print $fh $base_conf, $settings;
	close $fh;
	my $offset = -s $node->logfile;
	$node->start;
	return slurp_file($node->logfile, $offset);
}

# A new snowflake ID and UUID are above every one before.
sub check_accepted
{
	my ($what, $worker) = @_;
	my $max_id = max_snowflake(@ids);
	my $max_u = max_uuid(@uuids);
	is(uidgen_status($node)->{state}, 'ok', "$what: state ok");
	my ($id, $u) = generate(1000);
	ok($id > $max_id, "$what: new snowflake IDs are above all old ones")
	  or diag("new $id, old max $max_id");
	ok($u gt $max_u, "$what: new UUIDs are above all old ones");
	is($node->safe_psql('postgres', "SELECT snowflake_worker($id)"),
		$worker, "$what: IDs carry worker id $worker");
	return;
}

# snowflake_next() is refused because of the settings; uuidv7_next() works.
sub check_refused
{
	my ($what) = @_;
	my $err = psql_error($node, 'SELECT snowflake_next()');
	like($err,
		qr/ERROR:\s+55000: uidgen settings changed in a way that could repeat issued snowflake IDs/,
		"$what: snowflake_next() fails with 55000");
	like($err, qr/DETAIL:\s+IDs were issued with uidgen\.worker_id = /,
		"$what: the error names the settings IDs were issued under");
	is(uidgen_status($node)->{state}, 'settings changed', "$what: state is 'settings changed'");
	my $u = $node->safe_psql('postgres', 'SELECT uuidv7_next()');
	ok($u gt max_uuid(@uuids), "$what: uuidv7_next() still works, above all old UUIDs");
	push @uuids, $u;
	return;
}

generate(50000);

######## unsafe: epoch moved later
my $log = restart_with("uidgen.epoch = '2024-06-01 00:00:00+00'\n");
like($log, qr/WARNING:\s+uidgen settings changed in a way that could repeat issued snowflake IDs/,
	'epoch later: start-up warns');
check_refused('epoch later');

######## restored
restart_with('');
check_accepted('epoch restored', 0);

######## unsafe: fewer bits (ID space shifted down)
restart_with("uidgen.worker_bits = 8\n");
check_refused('worker_bits 10 -> 8');
restart_with("uidgen.sequence_bits = 10\n");
check_refused('sequence_bits 12 -> 10');
restart_with('');
check_accepted('layout restored', 0);

######## safe: another worker id
$log = restart_with("uidgen.worker_id = 7\n");
like($log, qr/LOG:\s+uidgen settings changed; new snowflake IDs are above every ID issued before/,
	'worker id change: logged as accepted');
check_accepted('worker_id 0 -> 7', 7);

######## safe: bits moved from the sequence to the worker id (same total)
restart_with("uidgen.worker_id = 7\nuidgen.worker_bits = 11\nuidgen.sequence_bits = 11\n");
check_accepted('worker_bits 10 -> 11, sequence_bits 12 -> 11', 7);

######## safe: epoch earlier; afterwards the old epoch is a later one
restart_with("uidgen.worker_id = 7\nuidgen.worker_bits = 11\nuidgen.sequence_bits = 11\nuidgen.epoch = '2023-01-01 00:00:00+00'\n");
check_accepted('epoch earlier', 7);
restart_with("uidgen.worker_id = 7\nuidgen.worker_bits = 11\nuidgen.sequence_bits = 11\n");
check_refused('back to the later epoch after IDs under the earlier one');
restart_with("uidgen.worker_id = 7\nuidgen.worker_bits = 11\nuidgen.sequence_bits = 11\nuidgen.epoch = '2023-01-01 00:00:00+00'\n");
check_accepted('earlier epoch restored', 7);

######## a state file of 0.1.0 (version 2: 56 bytes, CRC after upgrade_unknown)
$node->stop;
my $raw = slurp_file($state_file);
is(length($raw), 104, 'state file has the expected size');
my $v2 = substr($raw, 0, 4) . pack('L', 2) . substr($raw, 8, 42) . "\0\0";
$v2 .= pack('L', UidgenTest::crc32c($v2));
open my $v2fh, '>', $state_file or die $!;
binmode $v2fh;
print $v2fh $v2;
close $v2fh;
$node->start;
check_accepted("0.1.0's state file", 7);
is(uidgen_status($node)->{copy_reason}, '', "0.1.0's state file: not taken for a copy");
$node->stop;
is(read_state_file($node)->{version}, 4, "0.1.0's state file is rewritten as version 4");

######## a state file of 0.2.0 (version 3: 104 bytes, CRC at byte 96)
$raw = slurp_file($state_file);
my $v3 = substr($raw, 0, 4) . pack('L', 3) . substr($raw, 8, 88);
$v3 .= pack('L', UidgenTest::crc32c($v3)) . "\0" x 4;
open my $v3fh, '>', $state_file or die $!;
binmode $v3fh;
print $v3fh $v3;
close $v3fh;
$node->start;
check_accepted("0.2.0's state file", 7);
$node->stop;
is(read_state_file($node)->{version} . '|' . read_state_file($node)->{refused_worker}, '4|-1',
	"0.2.0's state file is rewritten as version 4, with no worker id refused");

######## corrupt state file
$raw = slurp_file($state_file);
# Flip one bit of the high-water mark: the CRC no longer matches.
substr($raw, 12, 1) = chr(ord(substr($raw, 12, 1)) ^ 0x10);
open my $fh, '>', $state_file or die $!;
binmode $fh;
print $fh $raw;
close $fh;
my $offset = -s $node->logfile;
$node->start;
like(slurp_file($node->logfile, $offset),
	qr/WARNING:\s+uidgen state file "uidgen.state" is unreadable or corrupt/,
	'corrupt state file: start-up warns');

sub check_corrupt
{
	my ($what) = @_;
	for my $f ('snowflake_next()', 'uuidv7_next()')
	{
		my ($err, $ret, $out) = psql_error($node, "SELECT $f");
		like($err, qr/ERROR:\s+XX001: uidgen state file "uidgen.state" is corrupt/,
			"$what: $f fails with XX001");
		is($out, '', "$what: $f returned nothing");
	}
	is(uidgen_status($node)->{state}, 'state file corrupt', "$what: state is 'state file corrupt'");
	return;
}
check_corrupt('bad CRC');
# The keeper must not overwrite the corrupt file with a fresh one: give it
# two of its once-a-second passes (time must pass: nothing shows that it
# did not write).
sleep(2);
$node->restart;
check_corrupt('bad CRC, after another restart');

# A truncated file is corrupt too.
$node->stop;
open $fh, '>', $state_file or die $!;
binmode $fh;
print $fh substr($raw, 0, 40);
close $fh;
$node->start;
check_corrupt('truncated file');

$node->stop;
done_testing();
