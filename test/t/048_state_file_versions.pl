# Guarantee: a state file uidgen cannot trust is never read as a mark.  A
# file of an unknown version, a 0.1.0 (version 2) file of the wrong length,
# a 0.1.0 file whose CRC does not match, a 0.2.0 (version 3) file whose CRC
# does not match or that is cut short, a version 4 file cut short, and a
# file the server may not read (mode 000: not taken for a missing one) are
# each refused at start-up
# (WARNING "unreadable or corrupt"), and snowflake_next() and uuidv7_next()
# fail with SQLSTATE XX001 instead of generating from an unknown mark; the
# sound file put back, generation resumes above everything issued before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('sv', 'uidgen.worker_id' => 1);
my @ids = split /\n/,
  $node->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 100)');
$node->stop;
my $path = $node->data_dir . '/uidgen.state';
my $sound = slurp_file($path);
is(length($sound), 104, 'precondition: a version 4 file of 104 bytes');

# Put $bytes in place of the state file.
sub put_state
{
	my ($bytes) = @_;
	open my $fh, '>:raw', $path or die "could not write $path: $!";
	print $fh $bytes;
	close $fh;
	return;
}

# The version 2 layout (0.1.0): the version 4 header up to its CRC at byte
# 52, 56 bytes in all.
my $v2 = substr($sound, 0, 52);
substr($v2, 4, 4) = pack('L', 2);
# The version 3 layout (0.2.0): 104 bytes, the CRC of the first 96 at byte 96.
my $v3 = substr($sound, 0, 4) . pack('L', 3) . substr($sound, 8, 88);

my %cases = (
	'unknown version' => do { my $b = $sound; substr($b, 4, 4) = pack('L', 99); $b },
	'version 2 of version 4 length' => do { my $b = $sound; substr($b, 4, 4) = pack('L', 2); $b },
	'version 2 with a wrong CRC' => $v2 . pack('L', 0x12345678),
	'version 3 with a wrong CRC' => $v3 . pack('L', UidgenTest::crc32c($v3) ^ 1) . "\0" x 4,
	'version 3 cut short' => $v3 . pack('L', UidgenTest::crc32c($v3)),
	'version 4 cut short' => substr($sound, 0, 96),
	'unreadable (mode 000)' => $sound,
);
for my $what (sort keys %cases)
{
	put_state($cases{$what});
	chmod(0, $path) if $what =~ /mode 000/;
	my $offset = -s $node->logfile;
	$node->start;
	is(count_in_log($node, qr/WARNING:\s+uidgen state file "uidgen.state" is unreadable or corrupt/, $offset),
		1, "$what: refused at start-up");
	like(psql_error($node, 'SELECT snowflake_next()'),
		qr/ERROR:\s+XX001: uidgen state file "uidgen.state" is corrupt/,
		"$what: snowflake_next() fails with XX001");
	like(psql_error($node, 'SELECT uuidv7_next()'),
		qr/ERROR:\s+XX001: uidgen state file "uidgen.state" is corrupt/,
		"$what: uuidv7_next() fails with XX001");
	$node->stop;
	chmod(0600, $path);
}

put_state($sound);
$node->start;
my $max = (sort { $a <=> $b } @ids)[-1];
is($node->safe_psql('postgres',
		"SELECT bool_and(id > $max) FROM (SELECT snowflake_next() AS id FROM generate_series(1, 100)) s"),
	't', 'the sound file back: IDs above everything issued before');
$node->stop;
done_testing();
