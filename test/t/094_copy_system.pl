# Guarantee: a state file written under another system identifier, as one
# copied alone into another cluster (restored from a backup of another
# server, or carried over by hand) makes the server a copy
# (clock/identity.c): uidgen_status() shows copy_reason "system
# identifier", and with the worker id of the server that wrote the state
# file, snowflake_next() refuses with 55000 and a detail that names the
# system identifier, while uuidv7_next() keeps working.
use strict;
use warnings;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $orig = uidgen_node('orig', 'uidgen.worker_id' => 1);
$orig->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 100)');
$orig->stop;
my $other = uidgen_node('other', 'uidgen.worker_id' => 1);
$other->stop;
isnt(read_state_file($orig)->{system_identifier}, read_state_file($other)->{system_identifier},
	'precondition: the two clusters have their own system identifiers');
copy($orig->data_dir . '/uidgen.state', $other->data_dir . '/uidgen.state')
  or die "copy: $!";
$other->start;

my $st = uidgen_status($other);
is($st->{state}, 'copy', 'state is copy');
is($st->{copy_reason}, 'system identifier', 'copy_reason is system identifier');
is($st->{origin_worker_id}, '1', 'origin_worker_id is 1');
my ($err, $ret, $out) = psql_error($other, 'SELECT snowflake_next()');
like($err, qr/ERROR:\s+55000:[^\n]*copied from/, 'snowflake_next() fails with 55000, copied from');
like($err,
	qr/DETAIL:\s+This server's system identifier is not the one its state file was written under\./,
	'the detail names the system identifier');
is($out, '', 'no ID was handed out');
like($other->safe_psql('postgres', 'SELECT uuidv7_next()'),
	qr/^[0-9a-f]{8}-[0-9a-f]{4}-7/, 'uuidv7_next() works');
$other->stop;

done_testing();
