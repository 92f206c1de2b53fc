# Block sequences at every crash point of their durable transitions
# (src/core/crashpoint.h; the order is in the header comments of allocworker.c,
# blocks.c, failover.c and allocsql.c): the process that reaches the point
# is SIGKILLed, the server goes through a crash restart, and no block and
# no seq_next() value any client received, before or after, is handed out
# twice.  A sequence of strategy 'sequence' counting down by 7 ("natd")
# is handed out between the episodes and by the old and the promoted
# primary of part 2: its blocks (first_id > last_id, checked as the
# intervals they span) never overlap either.
#
# Part 1, one crash per point of a round: clients stream seq_reserve_block()
# of a 'table' and a 'sequence' strategy sequence and seq_next() values
# while the point is armed; after the restart more are handed out.  The
# server runs with synchronous_commit off and a lazy WAL writer, so what the
# allocator does not flush itself is lost in the crash.
#
# Part 2, the skip after a promotion: blocks handed out by the old primary
# never reach the standby, which is promoted; its allocator is killed in
# the skip before the update of the timeline's record, after it, and after
# the commit, and fails once (crash_action error) after it: each time, what
# it serves afterwards lies above what the old primary handed out.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('crash_blocks',
	init => { allows_streaming => 1 },
	synchronous_commit => 'off',
	wal_writer_delay => '10s',
	wal_writer_flush_after => '1GB',
	restart_after_crash => 'on',
	log_statement => 'none',
	'uidgen.block_timeout' => '1min');
$node->safe_psql('postgres', q{
	SELECT seq_create('tab', block_size => 97);
	SELECT seq_create('nat', block_size => 100, strategy => 'sequence');
	SELECT seq_create('nxt', block_size => 13);
	SELECT seq_create('natd', start => 0, block_size => 50, increment => -7,
					  strategy => 'sequence');
});

# Every range handed out, per sequence: [first, last] (seq_next(): [v, v]).
my %got = (tab => [], nat => [], nxt => [], natd => []);

# Record the lines "first|last" or "value" of a sequence.
sub record
{
	my ($seq, @lines) = @_;
	for (@lines)
	{
		push @{ $got{$seq} }, [ $1, $2 ] if /^(\d+)\|(\d+)$/;
		push @{ $got{$seq} }, [ $1, $1 ] if /^(\d+)$/;
	}
	return;
}

# Hand out blocks and values from $node, recorded.
sub hand_out
{
	my ($node, $blocks, $values) = @_;
	push @{ $got{$_} }, @{ seq_blocks($node, 'postgres', $_, $blocks) } for ('tab', 'nat');
	# (counting down: the interval [last_id, first_id])
	push @{ $got{natd} }, map { [ $_->[1], $_->[0] ] } @{ seq_blocks($node, 'postgres', 'natd', $blocks) };
	record('nxt', split /\n/, $node->safe_psql('postgres',
		"SELECT seq_next('nxt') FROM generate_series(1, $values)"));
	return;
}

# No ID of any sequence lies in two ranges handed out.
sub check_disjoint
{
	my ($when) = @_;
	for my $seq (sort keys %got)
	{
		is(range_overlap($got{$seq}, []), 0,
			sprintf('%s: no ID of "%s" handed out twice (%d ranges)',
				$when, $seq, scalar @{ $got{$seq} }));
	}
	return;
}

######## part 1: the points of a round, hit by streaming clients
my %script = (
	tab => "SELECT first_id, last_id FROM seq_reserve_block('tab');\n",
	nat => "SELECT first_id, last_id FROM seq_reserve_block('nat');\n",
	nxt => "SELECT seq_next('nxt');\n",
);
my @mixed = ('tab', 'tab', 'nat', 'nxt');
for my $episode (
	[ 'alloc-before-commit', @mixed ],
	[ 'alloc-before-sequence-flush', @mixed ],
	[ 'alloc-after-commit', @mixed ],
	[ 'alloc-before-answer', @mixed ],
	[ 'alloc-before-cache-deliver', @mixed ],
	[ 'reserve-before-return', @mixed ],
	[ 'next-before-return', @mixed ],
	# rounds of strategy 'sequence' alone write no transaction id, so
	# their commits flush nothing: only the allocator's own flush
	# (allocsql.c) keeps the nextval()s
	[ 'reserve-before-return', 'nat', 'nat' ])
{
	my ($point, @kinds) = @$episode;
	my $clients = start_clients($node, map { $script{$_} x 20000 } @kinds);
	wait_for_lines(50, map { $_->{out} } @$clients)
	  or die "the clients received nothing before $point";
	my $offset = -s $node->logfile;
	set_crash_point($node, $point);
	wait_crash_restart($node, $point, $offset);
	stop_clients($clients, 60);
	set_crash_point($node, '');
	my $received = 0;
	for my $i (0 .. $#kinds)
	{
		my @lines = client_lines([ $clients->[$i] ]);
		$received += @lines;
		record($kinds[$i], @lines);
	}
	hand_out($node, 10, 100);
	note "$point: clients received $received answers before the crash";
	check_disjoint("crash at $point (clients: @kinds)");
}

######## part 1a: rounds that fail before their commit
# With crash_action error at alloc-before-commit every round fails for a
# while, and the streaming clients go on: what a failed round took is
# taken again by the next, so none of it may have reached anyone.
{
	my $clients = start_clients($node, map { $script{$_} x 20000 } @mixed);
	wait_for_lines(50, map { $_->{out} } @$clients)
	  or die 'the clients received nothing before the failing rounds';
	my $offset = -s $node->logfile;
	set_crash_point($node, 'alloc-before-commit', 'error');
	$node->wait_for_log(qr/uidgen allocator could not reserve IDs: uidgen crash point "alloc-before-commit"/, $offset);
	set_crash_point($node, '');
	my @counts = map { scalar(() = slurp_file($_->{out}) =~ /\n/g) } @$clients;
	wait_for_lines(100 + (sort { $b <=> $a } @counts)[0], map { $_->{out} } @$clients);
	stop_clients($clients, 1);
	record($mixed[$_], client_lines([ $clients->[$_] ])) for 0 .. $#mixed;
	like(client_errors($clients), qr/uidgen crash point "alloc-before-commit"/,
		'the callers of the failed rounds got their error');
	check_disjoint('rounds failed before their commit');
}

######## part 1b: a nextval() covered by the WAL record of a failed round
# After a checkpoint, the first nextval() logs (32 values ahead) and gives
# the round a transaction id; that round fails (crash_action error), and
# its abort flushes nothing.  The next round's nextval() logs nothing and
# its commit, without a transaction id, flushes nothing either: only the
# allocator's own flush keeps the block it hands out from being lost in
# the crash that follows.
$node->safe_psql('postgres', 'CHECKPOINT');
set_crash_point($node, 'alloc-before-commit', 'error');
like(psql_error($node, "SELECT * FROM seq_reserve_block('nat')"),
	qr/XX000: uidgen allocator could not reserve IDs from block sequence "nat": uidgen crash point "alloc-before-commit"/,
	'a round that called nextval() fails before its commit (XX000)');
set_crash_point($node, '');
record('nat', $node->safe_psql('postgres',
	"SELECT first_id || '|' || last_id FROM seq_reserve_block('nat')"));
my $offset = -s $node->logfile;
set_crash_point($node, 'alloc-before-commit');
psql_error($node, "SELECT * FROM seq_reserve_block('nat')");
wait_crash_restart($node, 'alloc-before-commit', $offset);
set_crash_point($node, '');
hand_out($node, 10, 100);
check_disjoint('a block served on an unflushed nextval() record, then a crash');

######## part 2: the skip after a promotion
$node->backup('before_lag');
my $standby = PostgreSQL::Test::Cluster->new('crash_blocks_standby');
$standby->init_from_backup($node, 'before_lag', has_streaming => 1);
# a worker id of its own, or the promoted copy refuses to serve blocks
# (src/replicas/copies.c)
$standby->append_conf('postgresql.conf', 'uidgen.worker_id = 1');
$standby->start;
$node->wait_for_catchup($standby);
$standby->stop;

# Blocks the old primary hands out that the standby never sees.
my %before = map { $_ => scalar @{ $got{$_} } } keys %got;
hand_out($node, 30, 1000);
my %lag = map { $_ => [ @{ $got{$_} }[ $before{$_} .. $#{ $got{$_} } ] ] } keys %got;
$node->stop('immediate');
$standby->start;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';

# One reservation from $standby with $point armed: the allocator must
# reach it (kill: crash restart; error: 55000 is not it, XX000 is).
sub skip_attempt
{
	my ($point, $action) = @_;
	my $offset = -s $standby->logfile;
	set_crash_point($standby, $point, $action);
	my ($err, $ret, $out) = psql_error($standby,
		"SELECT first_id || '|' || last_id FROM seq_reserve_block('tab')");
	record('tab', split /\n/, $out);
	is($out, '', "with $point armed ($action), the reservation returned no block");
	if ($action eq 'kill' && $out ne '')
	{
		fail("the allocator was killed at $point");
	}
	elsif ($action eq 'kill')
	{
		wait_crash_restart($standby, $point, $offset);
		pass("the allocator was killed at $point");
	}
	else
	{
		like($err, qr/ERROR:\s+XX000: uidgen allocator could not reserve IDs from block sequence "tab": uidgen crash point "\Q$point\E"/,
			"at $point, the failed round is reported to the caller with XX000");
	}
	set_crash_point($standby, '');
	return;
}

skip_attempt('skip-after-update', 'kill');
skip_attempt('skip-after-record', 'kill');
skip_attempt('skip-after-record', 'error');
skip_attempt('skip-after-commit', 'kill');
# the key is the timeline (plus 2^32 times a take-over's nonce: src/blocks/failover.c)
is($standby->safe_psql('postgres', 'SELECT timeline % 4294967296 FROM id_sequences_timeline'),
	'2', 'the skip for timeline 2 is recorded');
hand_out($standby, 20, 500);
for my $seq (sort keys %lag)
{
	my @after = @{ $got{$seq} }[ $before{$seq} + @{ $lag{$seq} } .. $#{ $got{$seq} } ];
	is(range_overlap($lag{$seq}, \@after), 0,
		sprintf('"%s": nothing the promoted server handed out (%d ranges) overlaps the %d ranges of the lag',
			$seq, scalar @after, scalar @{ $lag{$seq} }));
}
check_disjoint('after the promotion');

$standby->stop;
done_testing();
