# Guarantee: a standby (same postgresql.conf, so the same uidgen.worker_id)
# refuses snowflake_next() while in recovery (SQLSTATE 25006), since its IDs
# could collide with the primary's, but serves uuidv7(); once promoted after
# the primary is gone, its first IDs are above every ID the old primary
# could have issued, even when the old primary's clock ran ahead of the
# wall clock by up to uidgen.max_clock_drift (the post-promotion jump).
#
# A 4-bit sequence (16 IDs per ms) and a 5 s drift bound make a burst on the
# primary push its clock about 5 s ahead of the wall clock, far more than a
# promotion takes, so without the jump the promoted server would repeat IDs.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $drift_ms = 5000;
my %layout = (sequence_bits => 4);
my $primary = uidgen_node(
	'primary',
	init => { allows_streaming => 1 },
	'uidgen.worker_id' => 1,
	'uidgen.sequence_bits' => 4,
	'uidgen.max_clock_drift' => $drift_ms);

# Push the clock of $node to its drift bound; return the largest snowflake
# ID and the last UUID it issued.
sub burst
{
	my ($node, $n) = @_;
	my $id = $node->safe_psql('postgres',
		"SELECT max(snowflake_next()) FROM generate_series(1, $n)");
	my $u = $node->safe_psql('postgres', 'SELECT uuidv7()');
	return ($id, $u);
}

# How far the IDs of $node run ahead of its wall clock, in seconds.
sub ahead
{
	my ($node) = @_;
	return uidgen_status($node)->{clock_ahead};
}

# A base backup carries the primary's uidgen.state, whose mark lies up to
# max(2 s, 2 x max_clock_drift) ahead of the primary's clock when the
# backup is taken; a standby made from an older backup (the usual case) has
# a mark far behind.  Remove it, so that only the post-promotion jump can
# keep the promoted server above the old primary.
sub standby_from
{
	my ($name, $upstream, $backup) = @_;
	$upstream->backup($backup);
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($upstream, $backup, has_streaming => 1);
	unlink($node->data_dir . '/uidgen.state') or die "no uidgen.state in the backup: $!";
	$node->start;
	return $node;
}

$primary->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 1000)');
my $standby = standby_from('standby', $primary, 'bk1');
$primary->wait_for_catchup($standby);
# A cascading standby of the standby, for the second failover below.
my $standby2 = standby_from('standby2', $standby, 'bk2');

######## a standby refuses snowflake_next() and serves uuidv7()
for my $node ($standby, $standby2)
{
	my $name = $node->name;
	is($node->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', "$name is in recovery");
	my $err = psql_error($node, 'SELECT snowflake_next()');
	like($err, qr/ERROR:\s+25006: cannot generate snowflake IDs during recovery/,
		"$name: snowflake_next() fails with 25006");
	my $u = $node->safe_psql('postgres',
		q{SELECT u, uuidv7_timestamp(u) > now() - interval '1 min',
		        substr(u::text, 15, 1), substr(u::text, 20, 1) IN ('8','9','a','b')
		  FROM (SELECT uuidv7() AS u) s});
	like($u, qr/^[0-9a-f-]{36}\|t\|7\|t$/, "$name: uuidv7() works and returns a v7 UUID");
	is(uidgen_status($node)->{state}, 'recovery', "$name: uidgen_status() says recovery");
}

######## failover after the primary's clock ran ahead
my ($old_id, $old_u) = burst($primary, 100000);
my $ahead = ahead($primary);
cmp_ok($ahead, '>', 3,
	"precondition: the primary's IDs run ${ahead}s ahead of its wall clock");
$primary->wait_for_catchup($standby);
$primary->stop;
my $log_offset = -s $standby->logfile;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');

# Note the wall clock before the first call: the first ID must lie at least
# max_clock_drift beyond it.
my ($id, $u, $jumped) = split /\|/, $standby->safe_psql('postgres', q{
	CREATE TEMP TABLE t0 AS SELECT clock_timestamp() AS t;
	SELECT id, u, snowflake_timestamp(id) >= (SELECT t FROM t0) + interval '5 s'
	FROM (SELECT snowflake_next() AS id, uuidv7() AS u) s});
ok($id > $old_id, 'promoted standby: first snowflake ID above the old primary\'s last')
  or diag("new $id, old $old_id");
ok($u gt $old_u, 'promoted standby: first UUIDv7 above the old primary\'s last')
  or diag("new $u, old $old_u");
is($standby->safe_psql('postgres', "SELECT snowflake_worker($id)"),
	'1', 'the promoted standby keeps worker id 1');
is($jumped, 't', 'after promotion the first ID is max_clock_drift ahead of the wall clock');
ok( $standby->log_contains(
		'uidgen clock moved beyond uidgen.max_clock_drift \(5000 ms\) ahead of the system clock after recovery',
		$log_offset),
	'the jump is logged');
is(uidgen_status($standby)->{state}, 'ok', 'promoted standby: state ok');
is( $standby->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT snowflake_next() AS id, n FROM generate_series(1, 5000) n) s
	WHERE id <= } . $id),
	'0', 'promoted standby: later IDs keep increasing');

######## second failover, right after the first (promotion chain)
# KNOWN BUG (reported): after the promotion jump the clock is "held ahead":
# real time restarts from the jumped clock, so the drift bound lets IDs run
# up to 2 x max_clock_drift ahead of the wall clock, but the next promotion
# only jumps max_clock_drift ahead.  The same happens after every restart,
# which resumes up to max(2 s, 2 x max_clock_drift) above the wall clock
# (see the restart check below).  The promoted standby2 then issues IDs
# below the ones its predecessor issued: duplicates with the same worker id.
# The burst keeps its IDs in a table, which streams to standby2.
$standby->safe_psql('postgres',
	'CREATE TABLE burst AS SELECT snowflake_next() AS id FROM generate_series(1, 200000)');
my ($old2_id, $old2_u) = burst($standby, 1);
diag('first promoted node runs ' . ahead($standby) . 's ahead of its wall clock');
$standby->wait_for_catchup($standby2);
$standby->stop;
$standby2->promote;
$standby2->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
my ($id2, $u2) = split /\|/,
  $standby2->safe_psql('postgres', 'SELECT snowflake_next(), uuidv7()');
TODO:
{
	local $TODO = 'known bug: a promoted (or restarted) server can run 2 x max_clock_drift ahead';
	ok($id2 > $old2_id, 'second promotion: first snowflake ID above the previous primary\'s last')
	  or diag("new $id2, old $old2_id");
	ok($u2 gt $old2_u, 'second promotion: first UUIDv7 above the previous primary\'s last')
	  or diag("new $u2, old $old2_u");
	is( $standby2->safe_psql('postgres', q{
		SELECT count(*) FROM burst
		WHERE id IN (SELECT snowflake_next() FROM generate_series(1, 1000))}),
		'0', 'second promotion: no new ID repeats one of the previous primary');
}

######## the drift bound after a restart
# The post-promotion jump assumes no server ever issues IDs more than
# max_clock_drift ahead of its wall clock.
$standby2->restart;
my $lead = $standby2->safe_psql('postgres',
	q{SELECT extract(epoch FROM snowflake_timestamp(snowflake_next()) - clock_timestamp())});
TODO:
{
	local $TODO = 'known bug: after a restart IDs start up to max(2 s, 2 x max_clock_drift) ahead';
	cmp_ok($lead, '<=', $drift_ms / 1000 + 0.01,
		"after a restart, IDs are at most max_clock_drift ahead of the wall clock (${lead}s)");
}

$standby2->stop;
done_testing();
