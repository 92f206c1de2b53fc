# Guarantee: a registry that cannot grant a lease leaves the server without
# a worker id (snowflake_next() fails with 55000, showing callers nothing of
# the registry), the server log says why in libpq's or the registry's
# words, and the lease worker neither hangs nor gives up: once the cause is
# gone, it gets a lease.  Causes, one server each:
#  - a connection service in the setting (its host would be looked up
#    without a time limit): refused at once, no connection tried;
#  - a role that may not create uidgen_worker_leases in a database without
#    it; then the operator creates it and grants it: a lease;
#  - a table of the wrong shape (no id_bound): the claim's statement fails;
#    then the operator adds the column: a lease;
#  - a table locked by a prepared transaction: the claim stops at its
#    deadline; then the lock goes: a lease;
#  - a registry that accepts connections and never answers: the
#    connection stops at its deadline, and the server still stops at once.
# And the registry given by its IP address (no name to look up) grants a
# lease at once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IO::Socket::INET;
use Time::HiRes qw(time usleep);
use lib 'test';
use UidgenTest;

my $registry = PostgreSQL::Test::Cluster->new('rf_registry');
$registry->init;
$registry->append_conf('postgresql.conf',
	"listen_addresses = '127.0.0.1'\nmax_prepared_transactions = 2\n");
$registry->start;
$registry->safe_psql('postgres', q{
CREATE ROLE weak LOGIN;
CREATE DATABASE bare;
CREATE DATABASE shaped;
CREATE TABLE uidgen_worker_leases (
    worker_id integer PRIMARY KEY,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL,
    id_bound bigint NOT NULL);
});
$registry->safe_psql('shaped', q{
CREATE TABLE uidgen_worker_leases (
    worker_id integer PRIMARY KEY,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL);
});

my $socket = 'host=' . $registry->host . ' port=' . $registry->port;

# A server leasing from $conninfo (1 s lease timeouts: a 5 s lease).
sub lease_node
{
	my ($name, $conninfo) = @_;
	return uidgen_node($name, 'uidgen.worker_id' => undef,
		'uidgen.worker_id_registry' => $conninfo,
		'uidgen.worker_lease' => '5s');
}

# $node has no lease, says so to callers with nothing of the registry, and
# its log gives $why as the reason.
sub check_no_lease
{
	my ($node, $what, $why) = @_;
	ok(wait_until(sub { slurp_file($node->logfile) =~
		  /uidgen could not obtain a worker id lease from the registry: $why/ }),
		"$what: the log says why");
	my $err = psql_error($node, 'SELECT snowflake_next()');
	like($err, qr/ERROR:\s+55000: uidgen holds no lease on a worker id/,
		"$what: snowflake_next() fails with 55000");
	unlike($err, qr/registry:|uidgen_worker_leases|weak|127\.0\.0\.1/,
		"$what: and shows callers nothing of the registry");
	is(uidgen_status($node)->{state}, 'no lease', "$what: uidgen_status() says no lease");
	return;
}

# $node gets a lease, and generates with it.
sub check_leased
{
	my ($node, $what) = @_;
	ok( wait_until(sub {
			$node->safe_psql('postgres', 'SELECT worker_id FROM uidgen_status()') ne '' }),
		"$what: a lease");
	is($node->safe_psql('postgres',
			'SELECT snowflake_worker(snowflake_next()) = worker_id FROM uidgen_status()'),
		't', "$what: snowflake_next() carries the leased worker id");
	return;
}

######## by IP address: nothing to look up, a lease at once
my $ip = lease_node('rf_ip', 'host=127.0.0.1 port=' . $registry->port . ' dbname=postgres');
check_leased($ip, 'registry by IP address');
$ip->stop;

######## a connection service: refused before connecting
my $svc = lease_node('rf_svc', "service=uidgen_nosuch $socket dbname=postgres");
check_no_lease($svc, 'connection service',
	qr/could not connect to the registry: a connection service may name a host/);
like(psql_error($svc, 'SELECT uidgen_citus_worker()'),
	qr/ERROR:\s+55000:\s+no worker id is leased from the registry yet/,
	'no lease: uidgen_citus_worker() fails with 55000');
is($svc->safe_psql('postgres', q{SELECT uidgen_citus_refuse(ARRAY[NULL, -1]::int[], false)}), 'f',
	'no lease (worker id -1): uidgen_citus_refuse() refuses nothing for -1');
$svc->stop;

######## a role that may not create the table
my $weak = lease_node('rf_weak', "$socket dbname=bare user=weak");
check_no_lease($weak, 'no table, may not create it',
	qr/could not create table uidgen_worker_leases: ERROR:\s+permission denied/);
$registry->safe_psql('bare', q{
CREATE TABLE uidgen_worker_leases (
    worker_id integer PRIMARY KEY,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL,
    id_bound bigint NOT NULL);
GRANT SELECT, INSERT, UPDATE ON uidgen_worker_leases TO weak;
});
check_leased($weak, 'table made by the operator');
$weak->stop;

######## a table without id_bound: the claim fails
my $shape = lease_node('rf_shape', "$socket dbname=shaped");
check_no_lease($shape, 'table without id_bound',
	qr/could not claim a worker id: ERROR:\s+column "id_bound" does not exist/);
$registry->safe_psql('shaped',
	'ALTER TABLE uidgen_worker_leases ADD COLUMN id_bound bigint NOT NULL DEFAULT 0');
check_leased($shape, 'column added');
$shape->stop;

######## the table locked: the claim stops at its deadline
$registry->safe_psql('postgres', q{
BEGIN;
LOCK TABLE uidgen_worker_leases IN ACCESS EXCLUSIVE MODE;
PREPARE TRANSACTION 'lock';
});
my $locked = lease_node('rf_locked', "$socket dbname=postgres");
check_no_lease($locked, 'table locked',
	qr/could not claim a worker id: (?:timed out|ERROR:\s+canceling statement due to (?:lock|statement) timeout)/);
$registry->safe_psql('postgres', q{COMMIT PREPARED 'lock'});
check_leased($locked, 'lock released');
$locked->stop;

######## a registry that never answers: the connection stops at its deadline
my $silent = IO::Socket::INET->new(Listen => 16, LocalAddr => '127.0.0.1',
	LocalPort => 0, Proto => 'tcp') or die "could not listen: $!";
my $mute = lease_node('rf_mute',
	'host=127.0.0.1 port=' . $silent->sockport . ' dbname=postgres');
check_no_lease($mute, 'a registry that never answers',
	qr/could not connect to the registry: timed out/);
my $t = time;
$mute->stop('fast');
cmp_ok(time - $t, '<', 10, 'the server waiting on it stops (fast) within 10 s');
close $silent;

$registry->stop;
done_testing();
