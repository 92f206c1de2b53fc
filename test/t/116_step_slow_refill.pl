# Review of issue 22 part 1 (steps): a cache refill served by the
# allocator's slow path (the one-statement fast path found the row locked,
# or changed since its snapshot, and the row is free when the slow path
# locks it) takes "what is left, if it is short": the room left is an
# unsigned count, which exceeds PG_INT64_MAX for a sequence counting by one
# over more than half of bigint.  That is every sequence counting down from
# 1 with the default min_value (and one counting up from -2^63): the room
# cast to int64 was negative, the refill took a negative count, and
# next_block_start jumped to the end of bigint (the whole sequence lost,
# 2200H from then on, reserved_ahead negative).
#
# Deterministic: a transaction holds the row FOR SHARE while the allocator
# runs its fast path; the allocator waits at crash point
# "alloc-after-fast-miss" until that transaction has committed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;
use IPC::Run;

my $node = uidgen_node('main');
$node->safe_psql('postgres', q{
	SELECT seq_create('down', increment => -1, block_size => 10);
	SELECT seq_create('up', start => -9223372036854775808, block_size => 10)});
arm_crash_point($node, 'alloc-after-fast-miss', 'wait');
my $release = $node->data_dir . '/uidgen.crash_release';

for my $case (['down', '1', '-1000000', '1'],
	['up', '-9223372036854775808', '-9223372036854775808', '-9223372036853775808'])
{
	my ($seq, $first, $lo, $hi) = @$case;
	unlink $release;
	# the row locked by another transaction while the fast path runs
	my ($lin, $lout, $lerr) = ("BEGIN;\nSELECT 'locked' FROM id_sequences WHERE name = '$seq' FOR SHARE;\n", '', '');
	my $locker = IPC::Run::start([ 'psql', '-X', '-At', '-d', $node->connstr('postgres') ],
		'<', \$lin, '>', \$lout, '2>', \$lerr);
	$locker->pump until $lout =~ /locked/;
	my $offset = -s $node->logfile;
	my ($cout, $cerr) = ('', '');
	my $caller = IPC::Run::start([ 'psql', '-X', '-At', '-d', $node->connstr('postgres'),
		'-c', "SELECT seq_next('$seq')" ], '>', \$cout, '2>', \$cerr);
	ok(wait_for_log($node, qr/crash point "alloc-after-fast-miss" reached/, $offset),
		"$seq: the allocator missed the fast path");
	$lin .= "COMMIT;\n";
	$locker->finish;
	open(my $fh, '>', $release) or die;
	close($fh);
	$caller->finish;
	is($cout =~ s/\n//gr, $first, "$seq: seq_next() hands out the first ID") or diag($cerr);
	my $nbs = $node->safe_psql('postgres',
		"SELECT next_block_start FROM id_sequences WHERE name = '$seq'");
	ok($nbs >= $lo && $nbs <= $hi, "$seq: next_block_start $nbs moved by one refill, not to the end of bigint");
	is($node->safe_psql('postgres', "SELECT reserved_ahead >= 0 FROM id_sequences_prefetch WHERE name = '$seq'"),
		't', "$seq: the cache holds no negative count");
}

done_testing();
