# Guarantees across two more transitions:
#  (a) a primary killed at crash points mark-after-file and mark-after-wal
#      (kill; whichever process moves the mark, keeper or backend: the
#      state file written, then its WAL record) resumes, once restarted,
#      above every ID it issued; its standby (worker id 2), promoted after
#      the last crash, is above them too;
#  (b) a standby turned into a primary by removing standby.signal and
#      restarting it (no promotion: it stays on timeline 1) does not hand
#      out again the blocks its old primary handed out after the last WAL
#      it received.  0.2.0 keyed the skip of block sequences
#      (uidgen.promotion_skip) on the timeline and the take-overs only, so
#      this server did not skip, and handed all of them out again.  Such a
#      server cannot be told from a copy of the standby: its block
#      sequences are fenced until uidgen_take_over(), which skips them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my %conf = (
	'uidgen.worker_id' => 1,
	'uidgen.sequence_bits' => 4,
	'uidgen.max_clock_drift' => '1s');

######## (a) crash points on the regular mark
my $primary = uidgen_node('mk_primary', init => { allows_streaming => 1 }, %conf);
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('mk_standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->append_conf('postgresql.conf', "uidgen.worker_id = 2\n");
$standby->start;

my $old = origin_burst($primary, 2000);
for my $point ('mark-after-file', 'mark-after-wal')
{
	my $offset = -s $primary->logfile;
	arm_crash_point($primary, $point);
	my $clients = start_clients($primary,
		"SELECT snowflake_next() || '|' || uuidv7_next() FROM generate_series(1, 500);\n" x 2000);
	ok(wait_for_server_exit($primary), "$point: the primary went down");
	stop_clients($clients);
	is(count_in_log($primary, qr/uidgen crash point "\Q$point\E" reached/, $offset), 1,
		"$point: the crash point was reached");
	my @lines = client_lines($clients);
	note(sprintf('%s: %d IDs issued before the crash', $point, scalar @lines));
	disarm_crash_point($primary);
	$primary->start;
	for (@lines)
	{
		my ($id, $u) = split /\|/;
		next unless defined $u;
		$old->{ids}{$id} = 1;
		$old->{uuids}{$u} = 1;
		$old->{max_id} = $id if $id > $old->{max_id};
		$old->{max_u} = $u if $u gt $old->{max_u};
	}
	promoted_ids_above($primary, "$point, restarted", $old, 1, 20000);
	# what it issued now belongs to the origin too
	$old = origin_burst($primary, 2000, $old);
}
$primary->wait_for_catchup($standby);
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not end';
promoted_ids_above($standby, 'standby promoted after the crashes', $old, 2);
$standby->stop;

######## (b) standby.signal removed instead of a promotion
my $p2 = uidgen_node('sg_primary', init => { allows_streaming => 1 }, %conf);
$p2->safe_psql('postgres', q{SELECT seq_create('tab', block_size => 1000)});
my @orig = @{ seq_blocks($p2, 'postgres', 'tab', 10) };
$p2->backup('bk');
my $s2 = PostgreSQL::Test::Cluster->new('sg_standby');
$s2->init_from_backup($p2, 'bk', has_streaming => 1);
$s2->append_conf('postgresql.conf', "uidgen.worker_id = 2\n");
$s2->start;
push @orig, @{ seq_blocks($p2, 'postgres', 'tab', 10) };
$p2->wait_for_catchup($s2);
# The lag: blocks whose commits never reach the standby.
$s2->stop;
my $lag = seq_blocks($p2, 'postgres', 'tab', 100);
push @orig, @$lag;
$p2->stop('immediate');
unlink($s2->data_dir . '/standby.signal') or die "could not remove standby.signal: $!";
my $offset = -s $s2->logfile;
$s2->start;
is($s2->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f',
	'(b) the standby runs as a primary');
is($s2->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'), '1',
	'(b) precondition: it stayed on timeline 1');
is(uidgen_status($s2)->{block_sequences_fenced}, 't', '(b) its block sequences are fenced');
like(psql_error($s2, q{SELECT seq_reserve_block('tab')}),
	qr/ERROR:\s+55000: uidgen.worker_id 2 is the worker id of the server this data directory was copied from/,
	'(b) seq_reserve_block() refuses until a take-over: the standby\'s own worker id is an origin\'s');
$s2->safe_psql('postgres', 'SELECT uidgen_take_over()');
my $new = seq_blocks($s2, 'postgres', 'tab', 100);
my $n = range_overlap(\@orig, $new);
note(sprintf('(b) block values handed out again: %d (the lag held %d blocks of 1000)', $n, scalar @$lag));
is($n, 0, '(b) no block of the old primary is handed out again');
ok(count_in_log($s2, qr/uidgen skipped every block sequence of database "postgres"/, $offset) >= 1,
	'(b) the server logged its skip');
is(uidgen_status($s2)->{state}, 'ok', '(b) state is ok');
$s2->stop;

done_testing();
