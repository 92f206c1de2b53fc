# Guarantee: a standby (same postgresql.conf, so the same uidgen.worker_id)
# refuses snowflake_next() while in recovery (SQLSTATE 25006), since its IDs
# could collide with the primary's, but serves uuidv7_next(); it refuses
# uidgen_take_over() too (25006).  The primary's mark records read in
# pg_walinspect as "MARK", with the mark covering its last ID.  Once
# promoted it is a copy of a server with its worker id, so it still refuses
# (SQLSTATE 55000) until an operator declares the primary gone with
# uidgen_take_over(); then its first IDs are above every ID the old primary
# could have issued, even when the old primary's clock ran ahead of the
# wall clock by up to uidgen.max_clock_drift (the post-promotion jump, above
# the primary's mark replayed from WAL and max_clock_drift ahead of the
# wall clock).  No server, promoted or restarted, ever issues IDs more than
# uidgen.max_clock_drift ahead of its wall clock (outside a backwards step
# of the wall clock), and a take-over survives a restart: a promotion chain
# never repeats IDs.
#
# A 4-bit sequence (16 IDs per ms) and a 5 s drift bound make a burst on the
# primary push its clock about 5 s ahead of the wall clock, far more than a
# promotion takes, so without the jump the promoted server would repeat IDs.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
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
	my $u = $node->safe_psql('postgres', 'SELECT uuidv7_next()');
	return ($id, $u);
}

# A promoted standby with the primary's worker id is a copy: it refuses
# snowflake_next() until uidgen_take_over().
sub check_copy
{
	my ($node, $name) = @_;
	like(psql_error($node, 'SELECT snowflake_next()'),
		qr/ERROR:\s+55000:[^\n]*copied from/, "$name: snowflake_next() fails with 55000");
	my $st = uidgen_status($node);
	is($st->{state}, 'copy', "$name: state copy");
	is($st->{origin_worker_id}, '1', "$name: a copy of worker 1");
	return;
}

# How far the IDs of $node run ahead of its wall clock, in seconds.
sub ahead
{
	my ($node) = @_;
	return uidgen_status($node)->{clock_ahead};
}

# A base backup carries the primary's uidgen.state, whose mark lies up to
# 2 s (one window) ahead of the primary's clock when the
# backup is taken; a standby made from an older backup (the usual case) has
# a mark far behind.  Remove it, so that only the post-promotion jump (and
# what the standby replayed from WAL) can keep the promoted server above
# the old primary.
sub standby_from
{
	my ($name, $upstream, $backup) = @_;
	$upstream->backup($backup);
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($upstream, $backup, has_streaming => 1);
	my $state = $node->data_dir . '/uidgen.state';
	# (a server that has issued no ID since it started has no mark to copy)
	!-e $state or unlink($state) or die "could not remove $state: $!";
	$node->start;
	return $node;
}

$primary->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 1000)');
my $standby = standby_from('standby', $primary, 'bk1');
$primary->wait_for_catchup($standby);
# A cascading standby of the standby, for the second failover below.
my $standby2 = standby_from('standby2', $standby, 'bk2');

######## a standby refuses snowflake_next() and serves uuidv7_next()
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
		  FROM (SELECT uuidv7_next() AS u) s});
	like($u, qr/^[0-9a-f-]{36}\|t\|7\|t$/, "$name: uuidv7_next() works and returns a v7 UUID");
	is(uidgen_status($node)->{state}, 'recovery', "$name: uidgen_status() says recovery");
	like(psql_error($node, 'SELECT uidgen_take_over()'),
		qr/ERROR:\s+25006: cannot take over a worker id during recovery/,
		"$name: uidgen_take_over() fails with 25006 during recovery");
	is(uidgen_status($node)->{state}, 'recovery', "$name: still in state recovery after it");
}

######## failover after the primary's clock ran ahead
# (pg_walinspect is contrib: a PostgreSQL built from source may lack it)
my $walinspect = $primary->safe_psql('postgres',
	q{SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_walinspect'});
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect') if $walinspect;
my $burst_lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
my ($old_id, $old_u) = burst($primary, 100000);
my $ahead = ahead($primary);
SKIP:
{
	skip 'pg_walinspect is not installed', 3 unless $walinspect;
	# The mark records of the burst, as pg_walinspect (uidgen's rm_identify
	# and rm_desc) shows them: the last one covers the last ID, under worker
	# id 1.
	my @marks = split /\n/, $primary->safe_psql('postgres', qq{
		SELECT record_type || '|' || description FROM pg_get_wal_records_info('$burst_lsn',
			pg_current_wal_flush_lsn())
		WHERE resource_manager = 'uidgen' ORDER BY start_lsn});
	cmp_ok(scalar(@marks), '>', 0, 'the burst wrote mark records');
	like($marks[-1], qr/^MARK\|mark \d+ ms after the Unix epoch, worker id 1$/,
		'pg_walinspect describes a mark record');
	my ($mark_ms) = $marks[-1] =~ /mark (\d+) ms/;
	cmp_ok($mark_ms, '>=', snowflake_ms($old_id, %layout),
		'the last mark record covers the last ID');
}
cmp_ok($ahead, '>', 3,
	"precondition: the primary's IDs run ${ahead}s ahead of its wall clock");
$primary->wait_for_catchup($standby);
$primary->stop;
my $log_offset = -s $standby->logfile;
# The wall clock before the promotion (the servers run on this machine's
# clock): the first ID must lie at least max_clock_drift beyond it, whether
# the keeper or the first call moves the clock.
my $t_promote = time();
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
check_copy($standby, 'promoted standby');
$standby->safe_psql('postgres', 'SELECT uidgen_take_over()');

my ($id, $u, $jumped) = split /\|/, $standby->safe_psql('postgres', qq{
	SELECT id, u, snowflake_timestamp(id) >= to_timestamp($t_promote) + interval '5 s'
	FROM (SELECT snowflake_next() AS id, uuidv7_next() AS u) s});
ok($id > $old_id, 'promoted standby: first snowflake ID above the old primary\'s last')
  or diag("new $id, old $old_id");
ok($u gt $old_u, 'promoted standby: first UUIDv7 above the old primary\'s last')
  or diag("new $u, old $old_u");
is($standby->safe_psql('postgres', "SELECT snowflake_worker($id)"),
	'1', 'the promoted standby keeps worker id 1');
is($jumped, 't', 'after promotion the first ID is max_clock_drift ahead of the wall clock');
ok( $standby->log_contains(
		'uidgen moved its clocks past the former primary after recovery\n.*uidgen.max_clock_drift \(5000 ms\) ahead of the system clock',
		$log_offset),
	'the jump is logged');
is(uidgen_status($standby)->{state}, 'ok', 'promoted standby: state ok after uidgen_take_over()');
is( $standby->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT snowflake_next() AS id, n FROM generate_series(1, 5000) n) s
	WHERE id <= } . $id),
	'0', 'promoted standby: later IDs keep increasing');
# The jump is not "held": the promoted server's IDs stay within the drift
# bound of its wall clock (callers wait instead), even under a burst.
my ($burst_id) = burst($standby, 20000);
my $lead1 = $standby->safe_psql('postgres',
	qq{SELECT extract(epoch FROM snowflake_timestamp($burst_id) - clock_timestamp())});
cmp_ok($lead1, '<=', $drift_ms / 1000 + 0.01,
	"promoted standby: after a burst, IDs are at most max_clock_drift ahead of the wall clock (${lead1}s)");

######## second failover, right after the first (promotion chain)
# The first promoted server, its clock pushed to the drift bound again,
# fails over to standby2 (which streamed from it): standby2 jumps a drift
# ahead of its own wall clock, so it must not repeat any of its
# predecessor's IDs (same worker id).
# The burst keeps its IDs in a table, which streams to standby2.
$standby->safe_psql('postgres',
	'CREATE TABLE burst AS SELECT snowflake_next() AS id FROM generate_series(1, 200000)');
my ($old2_id, $old2_u) = burst($standby, 1);
diag('first promoted node runs ' . ahead($standby) . 's ahead of its wall clock');
$standby->wait_for_catchup($standby2);
$standby->stop;
$standby2->promote;
$standby2->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
check_copy($standby2, 'second promotion');
$standby2->safe_psql('postgres', 'SELECT uidgen_take_over()');
my ($id2, $u2) = split /\|/,
  $standby2->safe_psql('postgres', 'SELECT snowflake_next(), uuidv7_next()');
ok($id2 > $old2_id, 'second promotion: first snowflake ID above the previous primary\'s last')
  or diag("new $id2, old $old2_id");
ok($u2 gt $old2_u, 'second promotion: first UUIDv7 above the previous primary\'s last')
  or diag("new $u2, old $old2_u");
is( $standby2->safe_psql('postgres', q{
	SELECT count(*) FROM burst
	WHERE id IN (SELECT snowflake_next() FROM generate_series(1, 1000))}),
	'0', 'second promotion: no new ID repeats one of the previous primary');
is($standby2->safe_psql('postgres', 'SELECT count(*) FROM burst WHERE id >= ' . $id2),
	'0', 'second promotion: the first ID is above the whole burst');

######## the drift bound after a restart
# The post-promotion jump assumes no server ever issues IDs more than
# max_clock_drift ahead of its wall clock.  (The restarted server is no
# copy any more: it took over.)
# A clean shutdown saves the exact last tick, so the restarted server goes
# on right above its last ID instead of a state file window ahead.
my ($last_id) = burst($standby2, 20000);
$standby2->restart;
my ($first_id, $lead, $wall_ms) = split /\|/, $standby2->safe_psql('postgres',
	q{SELECT id, extract(epoch FROM snowflake_timestamp(id) - clock_timestamp()),
	         (extract(epoch FROM clock_timestamp()) * 1000)::bigint
	  FROM (SELECT snowflake_next() AS id) s});
is(uidgen_status($standby2)->{state}, 'ok', 'after a restart, the take-over still holds');
ok($first_id > $last_id, 'after a clean restart, IDs go on above the last one')
  or diag("new $first_id, old $last_id");
cmp_ok($lead, '<=', $drift_ms / 1000 + 0.01,
	"after a restart, IDs are at most max_clock_drift ahead of the wall clock (${lead}s)");
# Right above: in the millisecond after the last ID's, or at the wall clock
# if that has passed it meanwhile (a window ahead would be 5 to 10 s here).
my $expect_ms = snowflake_ms($last_id, %layout) + 1;
$expect_ms = $wall_ms if $wall_ms > $expect_ms;
cmp_ok(snowflake_ms($first_id, %layout), '<=', $expect_ms + 50,
	'after a clean restart, the first ID is right above the last (not a window ahead)');

$standby2->stop;
done_testing();
