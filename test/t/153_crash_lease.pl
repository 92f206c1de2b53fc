# Worker id leases at every crash point of their transitions (the order is
# in the header comment of src/lease.c): the lease worker is SIGKILLed
# between the registry's commit and what it publishes in shared memory, in
# a claim and in a renewal, and before the registry hears of a release at
# shutdown.  Clients stream snowflake_next() throughout; over every server
# life, no ID repeats, and no ID's time is above the greatest bound the
# registry committed for its worker id (what keeps a later holder of the
# worker id above it).  Errors are only 55000 (no lease, or a lease not
# confirmed yet).
#
# Then the registry's host name: libpq's lookup of a name is not bounded
# by connect_timeout nor by the lease worker's deadline, so the lease worker
# refuses to look one up (src/registry.c).  An LD_PRELOAD shim makes every
# lookup of a name ending in ".slow" take 30 s: the refusal comes at once,
# and with the name's address in hostaddr a lease is granted at once (a
# lookup would have held it for 30 s).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

my ($worker_bits, $sequence_bits) = (2, 6);

my $registry = PostgreSQL::Test::Cluster->new('lease_registry');
$registry->init;
$registry->append_conf('postgresql.conf', "listen_addresses = '127.0.0.1'");
$registry->start;
# every change to a lease, as in 140_worker_lease.pl
$registry->safe_psql('postgres', q{
CREATE TABLE uidgen_worker_leases (
    worker_id integer PRIMARY KEY,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL,
    id_bound bigint NOT NULL);
CREATE TABLE lease_log (worker_id integer, holder text, id_bound bigint,
    at timestamptz);
CREATE FUNCTION log_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lease_log VALUES (NEW.worker_id, NEW.holder, NEW.id_bound,
        clock_timestamp());
    RETURN NEW;
END $$;
CREATE TRIGGER log_lease AFTER INSERT OR UPDATE ON uidgen_worker_leases
    FOR EACH ROW EXECUTE FUNCTION log_lease();
});

my $socket = 'host=' . $registry->host . ' port=' . $registry->port;
my $node = uidgen_node('lease_gen',
	'uidgen.worker_id_registry' => "$socket dbname=postgres",
	'uidgen.worker_lease' => '3s',
	'uidgen.worker_bits' => $worker_bits,
	'uidgen.sequence_bits' => $sequence_bits,
	restart_after_crash => 'on',
	log_statement => 'none');

my @ids;    # every ID any client received
my $errors = '';

# Wait until $node holds a lease.
sub wait_lease
{
	return $node->poll_query_until('postgres',
		'SELECT worker_id IS NOT NULL FROM uidgen_status()');
}

my $script = "SELECT snowflake_next();\n" x 50000;

# Arm $point, let the lease worker reach it while clients generate, and
# collect what they received.  $provoke, if given, makes the transition
# happen (a claim needs a lost lease).
sub episode
{
	my ($point, $provoke) = @_;
	wait_lease() or die "no lease before $point";
	my $clients = start_clients($node, $script, $script);
	wait_for_lines(100, map { $_->{out} } @$clients)
	  or die "the clients received nothing before $point";
	my $offset = -s $node->logfile;
	set_crash_point($node, $point);
	$provoke->() if $provoke;
	wait_crash_restart($node, $point, $offset);
	set_crash_point($node, '');
	stop_clients($clients, 60);
	my @got = grep { /^\d+$/ } client_lines($clients);
	push @ids, @got;
	$errors .= client_errors($clients);
	wait_lease() or die "no lease after $point";
	push @ids, split /\n/, $node->safe_psql('postgres',
		'SELECT snowflake_next() FROM generate_series(1, 500)');
	pass(sprintf('the lease worker was killed at %s (%d IDs before it), a lease was granted after the restart',
		$point, scalar @got));
	return;
}

# A claim comes after a lost lease: hand the worker id held to someone else.
my $steal = sub {
	my $w = $node->safe_psql('postgres', 'SELECT worker_id FROM uidgen_status()');
	$registry->safe_psql('postgres',
		"UPDATE uidgen_worker_leases SET holder = 'thief' WHERE worker_id = $w");
};

episode('lease-renew-after-registry');
episode('lease-renew-after-publish');
episode('lease-claim-after-registry', $steal);
episode('lease-claim-after-raise', $steal);

# The release, at a shutdown: the killed worker never tells the registry.
wait_lease() or die 'no lease before the release';
push @ids, split /\n/, $node->safe_psql('postgres',
	'SELECT snowflake_next() FROM generate_series(1, 500)');
my $offset = -s $node->logfile;
set_crash_point($node, 'lease-release-before-registry');
$node->stop('fast', fail_ok => 1);
ok($node->log_contains(qr/uidgen crash point "lease-release-before-registry" reached/, $offset),
	'at shutdown, the lease worker was killed before the release reached the registry');
$node->adjust_conf('postgresql.conf', 'uidgen.crash_point', "''");
$node->start;
wait_lease() or die 'no lease after the release';
push @ids, split /\n/, $node->safe_psql('postgres',
	'SELECT snowflake_next() FROM generate_series(1, 500)');

######## every ID, over every life of the server
my %seen;
my $repeats = grep { $seen{$_}++ } @ids;
is($repeats, 0, sprintf('no snowflake ID repeats (%d IDs)', scalar @ids));
my @bad = grep { /ERROR:/ && !/uidgen holds no lease on a worker id|the snowflake clock is past the bound/ }
  split /\n/, $errors;
is(join("\n", @bad), '', 'the clients saw no error but the lack of a lease and the crashes');

# Each ID (worker id, ms) against the bounds the registry had recorded for
# its worker id by that ms (the registry's clock is this machine's).
my $decoded = $node->safe_psql('postgres',
	"SELECT string_agg(snowflake_worker(x)::text, ','),"
	  . " string_agg(floor(extract(epoch FROM snowflake_timestamp(x)) * 1000)::text, ',')"
	  . " FROM unnest('{" . join(',', @ids) . "}'::bigint[]) AS x");
my ($workers, $times) = split /\|/, $decoded;
my $above = $registry->safe_psql('postgres', qq{
	SELECT count(*) FROM unnest('{$workers}'::int[], '{$times}'::bigint[]) AS i(w, ms)
	WHERE i.ms > coalesce((SELECT max(l.id_bound >> 20) FROM lease_log AS l
		WHERE l.worker_id = i.w AND floor(extract(epoch FROM l.at) * 1000) <= i.ms), -1)});
is($above, '0',
	'no ID lies above the bound the registry had recorded for its worker id when it was issued');

######## the registry's host name is never looked up
my $shim = build_shim('gai_shim');
$node->stop;
my $port = $registry->port;
$node->adjust_conf('postgresql.conf', 'uidgen.worker_id_registry',
	"'host=registry.slow port=$port dbname=postgres'");
$offset = -s $node->logfile;
{
	local $ENV{LD_PRELOAD} = $shim;
	$node->start;
}
my $t0 = time;
my $refused = qr/could not connect to the registry: host name "registry\.slow" would be looked up without a time limit; give its address in hostaddr/;
sleep 1 while time - $t0 < 10 && !$node->log_contains($refused, $offset);
ok($node->log_contains($refused, $offset),
	'a registry named by a host name is refused at once, not looked up');
$t0 = time;
$node->stop('fast');
cmp_ok(time - $t0, '<', 10, 'and the server stops at once');

$node->adjust_conf('postgresql.conf', 'uidgen.worker_id_registry',
	"'host=registry.slow hostaddr=127.0.0.1 port=$port dbname=postgres'");
{
	local $ENV{LD_PRELOAD} = $shim;
	$node->start;
}
$t0 = time;
ok(wait_lease(), 'with hostaddr, a lease is granted');
cmp_ok(time - $t0, '<', 10, 'at once: the name was not looked up');
$node->stop;
done_testing();
