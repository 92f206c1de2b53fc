# Known defect (TODO): the skip key of block sequences (timeline plus
# take-overs times 2^32, copies_skip_key()) is not unique across servers.
# Two standbys A and B of a primary O, from one base backup; O fails, A is
# promoted (timeline 2, its end of recovery counts one take-over: key
# 2 + 1<<32, recorded by its allocator and replicated); B is re-pointed to
# A and follows timeline 2.  A hands out blocks whose commits never reach B
# and fails; the operator turns B into a primary by removing
# standby.signal (the transition of 152 (b)): B stays on timeline 2, and
# its end of recovery also counts one take-over, so its key is A's, it does
# not skip, and it hands out A's last blocks again.  A promotion of B
# (timeline 3) would have skipped.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $o = uidgen_node('cs_o', init => { allows_streaming => 1 }, 'uidgen.worker_id' => 1);
$o->safe_psql('postgres', q{SELECT seq_create('tab', block_size => 1000)});
my @all = @{ seq_blocks($o, 'postgres', 'tab', 10) };
$o->backup('bk');
my ($a, $b) = map {
	my $n = PostgreSQL::Test::Cluster->new("cs_$_->[0]");
	$n->init_from_backup($o, 'bk', has_streaming => 1);
	$n->append_conf('postgresql.conf', "uidgen.worker_id = $_->[1]\n");
	$n->start;
	$n
} [ 'a', 2 ], [ 'b', 3 ];
$o->wait_for_catchup($_) for ($a, $b);
$o->stop('immediate');

# A promoted; B follows it on timeline 2.
$a->promote;
$a->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'no promotion';
$b->stop;
$b->append_conf('postgresql.conf',
	"primary_conninfo = '" . $a->connstr . "'\nrecovery_target_timeline = 'latest'\n");
$b->start;
push @all, @{ seq_blocks($a, 'postgres', 'tab', 10) };
$a->wait_for_catchup($b);
$b->poll_query_until('postgres', 'SELECT received_tli = 2 FROM pg_stat_wal_receiver')
  or die 'B does not follow timeline 2';

# A's last blocks never reach B; A fails; standby.signal removed on B.
$b->stop;
my $lag = seq_blocks($a, 'postgres', 'tab', 100);
push @all, @$lag;
$a->stop('immediate');
my $ta = read_state_file($a)->{takeovers};
unlink($b->data_dir . '/standby.signal') or die "could not remove standby.signal: $!";
$b->start;
is($b->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f', 'B runs as a primary');
my $tl = $b->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()');
is($tl, '2', 'precondition: B stayed on timeline 2, A\'s');
my $new = seq_blocks($b, 'postgres', 'tab', 100);
$b->stop;
my $tb = read_state_file($b)->{takeovers};
my $n = range_overlap(\@all, $new);
note(sprintf('take-overs counted: A %d, B %d (timeline %s both); block values of A handed out again by B: %d (A\'s lag: %d blocks of 1000)',
	$ta, $tb, $tl, $n, scalar @$lag));
TODO:
{
	local $TODO = 'the skip key (timeline + take-overs << 32) is not unique across servers';
	is($n, 0, 'B hands out none of the blocks A handed out');
}

done_testing();
