# Guarantee: uidgen never lets libpq look a registry host name up without
# a time limit.  A host name with no hostaddr is refused before any
# connection is tried, also when it is one of a list (after an abstract
# socket, an empty entry, a socket directory and an IP address, none of
# which is looked up), and the log names that host; snowflake_next() fails
# with 55000 meanwhile.  A setting libpq cannot parse: libpq's reason in
# the log, no lease.  The same host name given with its hostaddr (in the
# setting, or in the server's environment as PGHOSTADDR) is not looked up:
# a lease; its registry row deleted, the server logs the lost lease (no
# holder named) and claims again; hostaddr='' in the setting hides
# PGHOSTADDR (as libpq does it): refused again.
# With a 20 s lease, the lease deadline is max(1 s, lease / 10) = 2 s
# before the registry's expiry.  One server, its own registry (restarted
# with each setting: no second cluster).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $name = 'uidgen-nosuch.invalid';
my $node = PostgreSQL::Test::Cluster->new('reg_conninfo');
my $port = $node->port;
$node->init;
my $conf = slurp_file($node->data_dir . '/postgresql.conf');

# (Re)start the server leasing from $conninfo, with a $lease lease.
sub restart_with
{
	my ($conninfo, $lease) = @_;
	$node->stop if $node->{_pid};
	open my $fh, '>', $node->data_dir . '/postgresql.conf' or die $!;
	print $fh $conf, "shared_preload_libraries = 'uidgen'\n",
	  "listen_addresses = '127.0.0.1'\n",
	  "uidgen.worker_id_registry = '" . ($conninfo =~ s/'/''/gr) . "'\n",
	  "uidgen.worker_lease = '$lease'\n";
	close $fh;
	my $offset = -s $node->logfile // 0;
	$node->start;
	return $offset;
}

# A host name alone (an empty PGHOSTADDR gives no address): refused,
# naming it.
my $offset;
{
	local $ENV{PGHOSTADDR} = '';
	$offset = restart_with("host=$name port=$port dbname=postgres", '5s');
}
$node->safe_psql('postgres', 'CREATE EXTENSION uidgen');
ok( wait_until(sub { slurp_file($node->logfile, $offset) =~
		  /could not connect to the registry: host name "\Q$name\E" would be looked up without a time limit; give its address in hostaddr/ }),
	'a host name without hostaddr: refused, the log names it');
like(psql_error($node, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000: uidgen holds no lease on a worker id/,
	'a host name without hostaddr: snowflake_next() fails with 55000');

# The name last in a list whose other entries are not looked up.
$offset = restart_with(
	"host=\@uidgen_abstract,,/uidgen-nosuch-dir,127.0.0.1,$name port=$port dbname=postgres", '5s');
ok( wait_until(sub { slurp_file($node->logfile, $offset) =~
		  /could not connect to the registry: host name "\Q$name\E" would be looked up/ }),
	'a host name last in a list: refused, the log names it');
unlike(slurp_file($node->logfile, $offset),
	qr/host name "(?:\@uidgen_abstract|\/uidgen-nosuch-dir|127\.0\.0\.1|)" would be looked up/,
	'the abstract socket, the empty entry, the socket directory and the IP address are not taken for names');

# A setting libpq cannot parse: libpq's own message, no lease.
$offset = restart_with("host=127.0.0.1 port=$port dbname='postgres", '5s');
ok( wait_until(sub { slurp_file($node->logfile, $offset) =~
		  /could not connect to the registry: unterminated quoted string in connection info string/ }),
	'a setting libpq cannot parse: the log gives libpq\'s reason');
is($node->safe_psql('postgres', 'SELECT state FROM uidgen_status()'), 'no lease',
	'a setting libpq cannot parse: no lease');

# The names with their addresses: not looked up, a lease; a 20 s lease has
# its deadline 2 s before the registry's expiry.
restart_with("host=$name,$name hostaddr=127.0.0.1,127.0.0.1 port=$port dbname=postgres", '20s');
ok( wait_until(sub {
		$node->safe_psql('postgres', 'SELECT worker_id FROM uidgen_status()') ne '' }),
	'a host name with its hostaddr: a lease');
my $row = $node->safe_psql('postgres', q{
	SELECT extract(epoch FROM l.expires_at - s.lease_deadline)
	FROM uidgen_status() s JOIN uidgen_worker_leases l ON l.worker_id = s.worker_id});
ok($row ne '' && abs($row - 2) < 0.5,
	'20 s lease: the deadline is 2 s (lease / 10) before the registry\'s expiry')
  or diag("expires_at - lease_deadline: $row s");
is($node->safe_psql('postgres',
		'SELECT snowflake_worker(snowflake_next()) = worker_id FROM uidgen_status()'),
	't', 'snowflake_next() carries the leased worker id');


# The address in the server's environment (PGHOSTADDR): not looked up, a
# lease.  But hostaddr='' in the setting hides PGHOSTADDR from libpq,
# which would look the name up: refused, naming it.
{
	local $ENV{PGHOSTADDR} = '127.0.0.1';
	restart_with("host=$name port=$port dbname=postgres", '5s');
}
ok( wait_until(sub {
		$node->safe_psql('postgres', 'SELECT worker_id FROM uidgen_status()') ne '' }),
	'PGHOSTADDR in the environment: a lease');

# Its row deleted from the registry: at the next renewal (every 5/3 s) the
# registry names no holder; the server says it lost the worker id, to no
# one named, and claims one again.
my $worker = $node->safe_psql('postgres', 'SELECT worker_id FROM uidgen_status()');
$offset = -s $node->logfile;
$node->safe_psql('postgres', "DELETE FROM uidgen_worker_leases WHERE worker_id = $worker");
ok( wait_until(sub { slurp_file($node->logfile, $offset) =~
		  /WARNING:\s+uidgen lost worker id $worker to another server\n[^\n]*DETAIL:\s+The registry no longer has a lease on it for this server\./ }),
	'its row deleted: the log says the lease was lost, to no holder named');
ok( wait_until(sub {
		$node->safe_psql('postgres',
			'SELECT count(*) FROM uidgen_status() s JOIN uidgen_worker_leases l USING (worker_id)') eq '1' }),
	'its row deleted: a lease again');
{
	local $ENV{PGHOSTADDR} = '127.0.0.1';
	$offset = restart_with("host=$name hostaddr='' port=$port dbname=postgres", '5s');
}
ok( wait_until(sub { slurp_file($node->logfile, $offset) =~
		  /could not connect to the registry: host name "\Q$name\E" would be looked up without a time limit/ }),
	"hostaddr='' with PGHOSTADDR in the environment: refused, the log names the host");
unlike(slurp_file($node->logfile, $offset), qr/could not translate host name/,
	"hostaddr='' with PGHOSTADDR in the environment: libpq never looked the name up");

# A bare database name: libpq takes the host from PGHOST, a name here:
# refused, naming it (uidgen took it for a syntax error and let libpq look
# the name up).
# (pg_ctl by hand: the test framework sets PGHOST to the node's socket
# directory for the servers it starts)
$node->stop;
restart_with('postgres', '5s');
$node->stop;
$offset = -s $node->logfile;
system_or_bail('env', "PGHOST=$name", 'PGHOSTADDR=', 'pg_ctl', '-D', $node->data_dir,
	'-l', $node->logfile, '-w', 'start');
ok( wait_until(sub { slurp_file($node->logfile, $offset) =~
		  /could not connect to the registry: host name "\Q$name\E" would be looked up without a time limit/ }),
	'a bare database name with PGHOST a host name: refused, the log names the host');
unlike(slurp_file($node->logfile, $offset), qr/could not translate host name/,
	'a bare database name with PGHOST a host name: libpq never looked the name up');

system_or_bail('pg_ctl', '-D', $node->data_dir, '-m', 'fast', '-w', 'stop');
done_testing();
