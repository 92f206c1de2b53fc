# Guarantee: a promoted standby's IDs are above every ID its primary
# issued, whatever the skew between their clocks.  The primary writes its
# durable high-water mark into WAL each time it moves it; the standby
# replays it, and at promotion its clocks jump above the replayed mark (and
# above its own wall clock + uidgen.max_clock_drift).  A standby with the
# primary's worker id (a cloned configuration) refuses snowflake_next() once
# promoted (SQLSTATE 55000, it is a copy) until uidgen_take_over(); one with
# a worker id of its own generates at once.
#
# Each run: a primary (worker id 1, 16 IDs per ms, 1 s drift bound) runs a
# burst that keeps its clock at the drift bound, about 1 s ahead of the wall
# clock, its client recording every snowflake ID and UUID; the standby runs
# under libfaketime with its clock 0.5 s or 5 s behind.  Once the standby
# has replayed the primary's WAL, the primary is stopped in the middle of
# the burst (immediate, as in a failover) and the standby promoted 0.3 s
# later.  Then the promoted server's IDs are counted against the primary's.
# uidgen 0.1.0, which only jumped max_clock_drift ahead of the promoted
# server's own (late) clock, repeated about 3,000 to 4,600 IDs with a 0.5 s
# skew and 13,500 to 71,000 with 5 s; 0.2.0 (same jump) repeated about
# 9,000 with 5 s in this test.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test';
use UidgenTest;

plan skip_all => 'libfaketime is not installed' unless faketime_available();

my %conf = (
	'uidgen.worker_id' => 1,
	'uidgen.sequence_bits' => 4,
	'uidgen.max_clock_drift' => '1s');

# A primary and its streaming standby, the standby's clock $skew seconds
# off (libfaketime) and, if $worker is given, with that uidgen.worker_id.
sub pair
{
	my ($name, $skew, $worker) = @_;
	my $primary = uidgen_node("${name}_primary", init => { allows_streaming => 1 }, %conf);
	$primary->backup('bk');
	my $standby = PostgreSQL::Test::Cluster->new("${name}_standby");
	$standby->init_from_backup($primary, 'bk', has_streaming => 1);
	# Whatever mark the backup carried, only the one replayed from WAL may
	# keep the promoted server above the burst below.
	my $state = $standby->data_dir . '/uidgen.state';
	!-e $state or unlink($state) or die "could not remove $state: $!";
	$standby->append_conf('postgresql.conf', "uidgen.worker_id = $worker") if defined $worker;
	my $fake = $standby->basedir . '/faketime';
	faketime_set($fake, $skew);
	start_faked($standby, $fake);
	my $t0 = time();
	my $server = $standby->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
	my $t1 = time();
	ok($server - $skew > $t0 - 0.1 && $server - $skew < $t1 + 0.1,
		"$name: the standby's clock is ${skew}s off")
	  or diag(sprintf('server %.3f, local %.3f to %.3f', $server, $t0, $t1));
	return ($primary, $standby);
}

# Fail over from $primary to $standby while the primary runs a burst that
# keeps its clock at the drift bound, its client recording every ID and
# UUID: once the burst has run long enough to cover the few seconds of ID
# space a promoted server with a late clock would start in, and the standby
# has replayed what the primary wrote, stop the primary (immediate) and
# promote the standby 0.3 s later.  Returns the client and the time of the
# stop, for primary_ids().
sub fail_over_during_burst
{
	my ($name, $primary, $standby) = @_;
	my $clients = start_clients($primary,
		"SELECT snowflake_next(), uuidv7_next() FROM generate_series(1, 200);\n" x 3000);
	# 16 IDs per ms: about 5 s of ID space
	wait_for_lines(80_000, $clients->[0]{out}) or die 'the burst did not get going';
	$primary->wait_for_catchup($standby);
	$primary->stop('immediate');
	my $t_stop = time();
	usleep(300_000);    # (time must pass: a promotion some time after the stop)
	$standby->promote;
	$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
	return { clients => $clients, t_stop => $t_stop };
}

# The primary's IDs and UUIDs (lines "id|uuid"), and the largest of each.
sub primary_ids
{
	my ($name, $fo) = @_;
	stop_clients($fo->{clients});
	like(client_errors($fo->{clients}), qr/connection|terminat/i,
		"$name: precondition: the burst ran until the primary stopped");
	my @lines = client_lines($fo->{clients});
	my $max_id = max_snowflake(map { (split /\|/)[0] } @lines);
	my $max_u = max_uuid(map { (split /\|/)[1] } @lines);
	my $lead = snowflake_ms($max_id, sequence_bits => 4) / 1000 - $fo->{t_stop};
	cmp_ok($lead, '>', 0.7,
		"$name: precondition: the primary's last ID lies ${lead}s beyond the moment it stopped");
	note(sprintf('%s: the primary issued %d IDs', $name, scalar @lines));
	return { lines => \@lines, max_id => $max_id, max_u => $max_u };
}

# The mark replayed from the primary's WAL covers the primary's last ID.
sub check_replayed_mark
{
	my ($name, $node, $old) = @_;
	my $st = uidgen_status($node);
	isnt($st->{origin_high_water_mark}, '', "$name: origin_high_water_mark is set after promotion");
	is( $node->safe_psql('postgres', qq{
		SELECT origin_high_water_mark > snowflake_timestamp($old->{max_id}) FROM uidgen_status()}),
		't', "$name: the replayed mark is above the primary's last ID");
	return $st;
}

# $n IDs and UUIDs (lines "id|uuid") from the promoted server, at once.
sub promoted_ids
{
	my ($name, $node, $n) = @_;
	my $t0 = time();
	my @new = split /\n/, $node->safe_psql('postgres',
		"SELECT snowflake_next(), uuidv7_next() FROM generate_series(1, $n)");
	note(sprintf('%s: %d IDs on the promoted server in %.1f s', $name, scalar @new, time() - $t0));
	is(scalar @new, $n, "$name: the promoted server returned $n IDs");
	return \@new;
}

# Compare the promoted server's IDs with the primary's, and with the mark
# it replayed.
sub compare
{
	my ($name, $node, $old, $new, $worker) = @_;
	my (%old_ids, %old_us);
	for (@{ $old->{lines} })
	{
		my ($id, $u) = split /\|/;
		$old_ids{$id} = 1;
		$old_us{$u} = 1;
	}
	my ($repeats, $urepeats, $below, $ubelow, $other) = (0, 0, 0, 0, 0);
	for (@$new)
	{
		my ($id, $u) = split /\|/;
		$repeats++ if $old_ids{$id};
		$urepeats++ if $old_us{$u};
		$below++ if $id <= $old->{max_id};
		$ubelow++ if $u le $old->{max_u};
		$other++ if (($id >> 4) & 1023) != $worker;
	}
	note("$name: repeats of the primary's: $repeats snowflake IDs, $urepeats UUIDs");
	is($repeats, 0, "$name: no snowflake ID of the promoted server repeats one of the primary");
	is($urepeats, 0, "$name: no UUID of the promoted server repeats one of the primary");
	is($below, 0, "$name: every new snowflake ID is above the primary's last");
	is($ubelow, 0, "$name: every new UUID is above the primary's last");
	is($other, 0, "$name: the promoted server issues IDs with worker id $worker");
	# Above the replayed mark, not just above the primary's IDs: with a
	# 0.5 s skew, a jump of max_clock_drift ahead of the promoted server's
	# clock can land above the IDs a failover left, but not above the mark.
	my $mark_ms = int($node->safe_psql('postgres',
		'SELECT extract(epoch FROM origin_high_water_mark) * 1000 FROM uidgen_status()'));
	my ($first_id, $first_u) = split /\|/, $new->[0];
	cmp_ok(snowflake_ms($first_id, sequence_bits => 4), '>=', $mark_ms,
		"$name: the first new snowflake ID is at or above the replayed mark");
	cmp_ok(uuid_ms($first_u), '>=', $mark_ms, "$name: the first new UUID is at or above the replayed mark");
	return;
}

######## same worker id: refusal, take-over, then above the primary
for my $skew ('-0.5', '-5')
{
	my $name = "same_worker_skew${skew}s";
	my ($primary, $standby) = pair($name, $skew);
	my $fo = fail_over_during_burst($name, $primary, $standby);

	my $err = psql_error($standby, 'SELECT snowflake_next()');
	like($err, qr/ERROR:\s+55000:[^\n]*copied from/,
		"$name: the promoted copy refuses snowflake_next() (55000, copied from)");
	like($err, qr/HINT:[^\n]*uidgen\.worker_id[^\n]*uidgen_take_over\(\)/,
		"$name: the hint names uidgen.worker_id and uidgen_take_over()");
	my $old = primary_ids($name, $fo);
	my $st = check_replayed_mark($name, $standby, $old);
	is($st->{state}, 'copy', "$name: state is copy");
	is($st->{copy_reason}, 'standby', "$name: copy_reason is standby");
	is($st->{origin_worker_id}, '1', "$name: origin_worker_id is the primary's");
	# UUIDs need no take-over, but must be above the primary's too.
	my $u = $standby->safe_psql('postgres', 'SELECT uuidv7_next()');
	ok($u gt $old->{max_u}, "$name: before the take-over, uuidv7_next() works, above the primary's UUIDs")
	  or diag("new $u, old max $old->{max_u}");

	$standby->safe_psql('postgres', 'SELECT uidgen_take_over()');
	$st = uidgen_status($standby);
	is($st->{state}, 'ok', "$name: state is ok after uidgen_take_over()");
	is($st->{origin_worker_id}, '', "$name: origin_worker_id is NULL after uidgen_take_over()");
	compare($name, $standby, $old, promoted_ids($name, $standby, 40000), 1);
	$standby->stop;
}

######## a worker id of its own: no refusal, and IDs still above the primary's
# The promoted server generates at once.
for my $skew ('-0.5', '-5')
{
	my $name = "own_worker_skew${skew}s";
	my ($primary, $standby) = pair($name, $skew, 2);
	my $fo = fail_over_during_burst($name, $primary, $standby);
	my $new = promoted_ids($name, $standby, 40000);
	my $old = primary_ids($name, $fo);
	compare($name, $standby, $old, $new, 2);
	my $st = check_replayed_mark($name, $standby, $old);
	is($st->{state}, 'ok', "$name: state is ok");
	is($st->{origin_worker_id}, '', "$name: origin_worker_id is NULL: it is no copy of worker 1");
	$standby->stop;
}

done_testing();
