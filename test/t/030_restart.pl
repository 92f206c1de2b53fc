# Guarantee: snowflake IDs and UUIDv7s never go backwards across a restart
# of the server, whether clean (pg_ctl stop), a crash of the postmaster
# (kill -9 while clients are generating) or a crash of one backend (the
# postmaster reinitialises shared memory): every ID issued afterwards is
# above every ID issued before, whether it was committed or only returned
# to a client, because the clock resumes above the durable high-water mark
# in uidgen.state, which covers every ID ever handed out.
#
# A 4-bit sequence (16 IDs per ms) lets the clients push the clock to the
# drift bound, about a second ahead of the wall clock, so a server that
# restarted from the wall clock alone would repeat IDs: the tests check
# that precondition before every crash.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test';
use UidgenTest;

my %layout = (sequence_bits => 4);
my $node = uidgen_node('restart', 'uidgen.sequence_bits' => 4,
	restart_after_crash => 'on');
$node->safe_psql('postgres', q{
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(),
	                u uuid UNIQUE DEFAULT uuidv7_next(),
	                c int)});

# The largest snowflake ID and UUID a statement returns.
sub max_pair
{
	my ($sql) = @_;
	my $r = $node->safe_psql('postgres', $sql);
	return split /\|/, $r;
}

# Push the clock ahead: 40000 IDs need 2.5 s of 16-ID milliseconds.
my $burst = q{SELECT id, u FROM (SELECT snowflake_next() AS id, uuidv7_next() AS u
	FROM generate_series(1, 40000)) s ORDER BY id DESC LIMIT 1};

# Every new ID and UUID above the given maxima.
sub check_above
{
	my ($max_id, $max_u, $what) = @_;
	my ($id1, $u1) = max_pair('SELECT snowflake_next(), uuidv7_next()');
	my ($u2, $id2) = max_pair('SELECT uuidv7_next(), snowflake_next()');
	ok($id1 > $max_id, "$what: first snowflake ID is above all before")
	  or diag("new $id1, old max $max_id");
	ok($u1 gt $max_u, "$what: first UUIDv7 is above all before")
	  or diag("new $u1, old max $max_u");
	ok($id2 > $id1 && $u2 gt $u1, "$what: and they keep increasing");
	my $stray = $node->safe_psql('postgres',
		"SELECT count(*) FROM t WHERE id > $id1 OR u > '$u1'");
	is($stray, '0', "$what: no committed row is above the new IDs");
	return;
}

# Precondition: the clock is well ahead of the wall clock, so that only the
# high-water mark can keep IDs increasing across the restart.
sub clock_is_ahead
{
	my ($what) = @_;
	my $ahead = uidgen_status($node)->{clock_ahead};
	cmp_ok($ahead, '>', 0.3, "$what: precondition: clock ahead of wall clock (${ahead}s)");
	return;
}

######## 1. clean restart
my ($max_id, $max_u) = max_pair($burst);
clock_is_ahead('clean restart');
$node->restart;
check_above($max_id, $max_u, 'clean restart');

######## 2. kill -9 of the postmaster while clients generate
# Each client alternates committed inserts and bare calls, and prints every
# ID it is handed (id|uuid lines).
sub client_script
{
	my ($c) = @_;
	my $one = "INSERT INTO t (c) VALUES ($c) RETURNING id, u;\n"
	  . "SELECT snowflake_next(), uuidv7_next();\n"
	  . "SELECT id, u FROM (SELECT snowflake_next() AS id, uuidv7_next() AS u "
	  . "FROM generate_series(1, 100)) s ORDER BY id DESC LIMIT 1;\n";
	return $one x 20000;
}

sub crash_under_load
{
	my ($what, $crash) = @_;
	my $rows_before = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
	my $clients = start_clients($node, map { client_script($_) } 1 .. 3);
	$node->poll_query_until('postgres',
		"SELECT count(*) >= $rows_before + 3000 FROM t")
	  or die "clients made no progress";
	# (on a loaded machine the clients may need a while to outrun it)
	$node->poll_query_until('postgres',
		q{SELECT clock_ahead > interval '0.3 s' FROM uidgen_status()});
	clock_is_ahead($what);
	$crash->();
	stop_clients($clients);
	my @lines = client_lines($clients);
	my @pairs = map { [ split /\|/ ] } grep { /^\d+\|[0-9a-f-]{36}$/ } @lines;
	cmp_ok(scalar(@pairs), '>', 3000, "$what: clients saw IDs before the crash");
	like(client_errors($clients),
		qr/server closed the connection|terminating connection|connection to server was lost|no connection to the server/,
		"$what: clients lost their connections");
	return @pairs;
}

my @seen = crash_under_load('postmaster kill -9', sub { kill9_and_wait($node); });

# The durable mark covers every ID handed out.
my $state = read_state_file($node);
my $seen_id = max_snowflake(map { $_->[0] } @seen);
my $seen_u = max_uuid(map { $_->[1] } @seen);
cmp_ok(snowflake_ms($seen_id, %layout), '<=', $state->{hwm_ms},
	'high-water mark on disk covers every snowflake ID a client saw');
cmp_ok(uuid_ms($seen_u), '<=', $state->{hwm_ms},
	'high-water mark on disk covers every UUID a client saw');

$node->start;
my ($committed_id, $committed_u) = max_pair(
	q{SELECT (SELECT max(id) FROM t), (SELECT u FROM t ORDER BY u DESC LIMIT 1)});
ok($seen_id >= $committed_id, 'every committed ID was seen by a client')
  or diag("seen $seen_id committed $committed_id");
check_above(max_snowflake($seen_id, $committed_id),
	max_uuid($seen_u, $committed_u), 'postmaster kill -9');
my ($first_id, $first_u) = max_pair('SELECT snowflake_next(), uuidv7_next()');
cmp_ok(snowflake_ms($first_id, %layout), '>', $state->{hwm_ms},
	'after the crash, snowflake IDs resume above the saved mark');
cmp_ok(uuid_ms($first_u), '>', $state->{hwm_ms},
	'after the crash, UUIDs resume above the saved mark');

######## 3. kill -9 of one backend: the postmaster reinitialises shared memory
my $log_offset = -s $node->logfile;
@seen = crash_under_load(
	'backend kill -9',
	sub {
		# any of the three clients: each generates in a loop (its current
		# query may be an INSERT using the column defaults, which does not
		# name the generators)
		my $pid = $node->safe_psql('postgres',
			q{SELECT pid FROM pg_stat_activity
			  WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
			  LIMIT 1});
		ok($pid =~ /^\d+$/, 'found a generating backend');
		kill 'KILL', $pid;
	});
$node->poll_query_until('postgres', 'SELECT true FROM uidgen_status()')
  or die 'server did not come back';
ok( $node->log_contains(
		'all server processes terminated; reinitializing', $log_offset),
	'the postmaster reinitialised shared memory');
($committed_id, $committed_u) = max_pair(
	q{SELECT (SELECT max(id) FROM t), (SELECT u FROM t ORDER BY u DESC LIMIT 1)});
$seen_id = max_snowflake(map { $_->[0] } @seen);
$seen_u = max_uuid(map { $_->[1] } @seen);
check_above(max_snowflake($seen_id, $committed_id),
	max_uuid($seen_u, $committed_u), 'backend kill -9');

# Nothing was ever repeated: the keys of t are unique and every row is valid.
is( $node->safe_psql('postgres',
		q{SELECT count(*) FILTER (WHERE uuidv7_timestamp(u) IS NULL OR id <= 0),
		         count(*) >= 6000 FROM t}),
	'0|t', 'all committed rows hold valid IDs');

$node->stop;
done_testing();
