# A refill of seq_next()'s shared cache whose allocator exits after it took
# the refill and before it delivered it (blocks/blockcache.c,
# cache_recover()): the caller waiting for it puts it back for the next
# allocator, which serves it, within uidgen.block_timeout.  The block the
# exited allocator committed is a gap, never handed out.
#
# The allocator is held at crash point "alloc-before-cache-deliver" (after
# its commit) and terminated there (pg_terminate_backend: it leaves its
# slot, no crash restart, shared memory stays).
#
# Held there again, a seq_advance() (blocks/cachetable.c,
# cachetable_unprefetch()) gives back the refill in flight, which ends at
# the row's next_block_start: its IDs were never handed out, and are handed
# out once, by the next allocator.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('orphan_refill', 'uidgen.block_timeout' => '20s');
my ($out, $err, $offset);

# A seq_next() of a new sequence, in the background, whose refill the
# allocator has committed and is held before delivering.
sub held_refill
{
	my ($seq) = @_;
	$node->safe_psql('postgres', "SELECT seq_create('$seq', block_size => 10)");
	arm_crash_point($node, 'alloc-before-cache-deliver', 'wait');
	$offset = -s $node->logfile;
	($out, $err) = ('', '');
	my $caller = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		  '-c', "SELECT seq_next('$seq')" ],
		'>', \$out, '2>', \$err);
	$node->wait_for_log(qr/uidgen crash point "alloc-before-cache-deliver" reached/, $offset);
	return $caller;
}

# Disarm the point (the next allocator must pass it) and end the held one.
sub end_held_allocator
{
	disarm_crash_point($node);
	$node->safe_psql('postgres', q{
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE backend_type = 'uidgen allocator'});
	return;
}

my $caller = held_refill('orph');
is($node->safe_psql('postgres', q{SELECT next_block_start FROM id_sequences WHERE name = 'orph'}),
	11, 'the held allocator committed the first block (1..10)');
end_held_allocator();
ok($caller->finish, 'the waiting seq_next() is served') or diag $err;
is($out, "11\n", 'from the next block: the one the exited allocator committed is a gap');
is($node->safe_psql('postgres', q{SELECT next_block_start FROM id_sequences WHERE name = 'orph'}),
	21, 'the next allocator committed the next block (11..20)');
is($node->safe_psql('postgres', q{SELECT seq_next('orph')}), 12, 'and carves on from it');
unlike(slurp_file($node->logfile, $offset), qr/crash point "alloc-before-cache-deliver" released/,
	'the held allocator was never released: it exited');

# The refill in flight given back by seq_advance().
$caller = held_refill('fl');
is($node->safe_psql('postgres', q{SELECT seq_advance('fl', 0)}), 1,
	'seq_advance() gives back the committed refill in flight (1..10): its next ID is 1');
end_held_allocator();
ok($caller->finish, 'the waiting seq_next() is served') or diag $err;
is($out, "1\n", 'with the first ID given back, once');
is($node->safe_psql('postgres', q{SELECT seq_next('fl')}), 2, 'and carves on from it');

$node->stop;
done_testing();
