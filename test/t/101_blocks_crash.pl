# Block sequences survive kill -9: clients stream reservations (and
# seq_next() values) while the allocator, the process that commits them, is
# killed with SIGKILL, so that the postmaster resets shared memory (and the
# WAL buffers in it) and runs crash recovery; afterwards no new block
# overlaps any block a client had received.
#
# synchronous_commit is off and the WAL writer lazy, so a reservation would
# be lost in the crash unless the allocator commits it durably before
# handing it out.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('blocks_crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'uidgen'
synchronous_commit = off
wal_writer_delay = 10s
wal_writer_flush_after = 1GB
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('crash', block_size => 97);
    SELECT seq_create('crash_next', block_size => 13);
});

# Client scripts: many reservations, one per statement and transaction.
my $dir = $PostgreSQL::Test::Utils::tmp_check;
my %script = (
    reserve => "SELECT first_id, last_id FROM seq_reserve_block('crash');\n"
      . "SELECT * FROM seq_reserve_block('crash', 5);\n",
    next => "SELECT seq_next('crash_next');\n",
);
my (@clients, @outputs);
for my $i (1 .. 4)
{
    my $kind = $i == 4 ? 'next' : 'reserve';
    my $sql = "$dir/blocks_crash_$i.sql";
    my $out = "$dir/blocks_crash_$i.out";
    PostgreSQL::Test::Utils::append_to_file($sql, $script{$kind} x 200000);
    unlink $out;
    my $h = IPC::Run::start(
        [ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1',
          '-d', $node->connstr('postgres'), '-f', $sql ],
        '>', $out, '2>', "$out.err");
    push @clients, $h;
    push @outputs, [ $kind, $out ];
}

# Let them stream for a while, then kill the postmaster mid-flight.
my $deadline = time() + 60;
while (time() < $deadline)
{
    my $lines = 0;
    for my $o (@outputs)
    {
        $lines += -s $o->[1] // 0;
    }
    last if $lines > 200000;    # bytes, roughly 10000 answers
    usleep(100_000);
}
my $victim = $node->safe_psql('postgres',
    "SELECT pid FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
like($victim, qr/^\d+$/, 'the allocator is running');
kill 'KILL', $victim;
$_->finish for @clients;
$node->poll_query_until('postgres', 'SELECT 1', '1')
  or die 'the server did not come back';
like(PostgreSQL::Test::Utils::slurp_file($node->logfile),
    qr/terminated by signal 9/, 'the server went through a crash restart');

# What the clients received before the crash.
my (@blocks, @singles);
for my $o (@outputs)
{
    my $text = PostgreSQL::Test::Utils::slurp_file($o->[1]);
    for my $line (split /\n/, $text)
    {
        if ($o->[0] eq 'reserve' && $line =~ /^(-?\d+)\|(-?\d+)$/)
        {
            push @blocks, [ $1, $2 ];
        }
        elsif ($o->[0] eq 'next' && $line =~ /^(\d+)$/)
        {
            push @singles, $1;
        }
    }
}
cmp_ok(scalar(@blocks), '>', 100, 'clients received blocks before the crash');
cmp_ok(scalar(@singles), '>', 100, 'a client received seq_next() values before the crash');

# Received blocks are disjoint among themselves.
my @sorted = sort { $a->[0] <=> $b->[0] } @blocks;
my $overlaps = 0;
for my $i (1 .. $#sorted)
{
    $overlaps++ if $sorted[$i][0] <= $sorted[ $i - 1 ][1];
}
is($overlaps, 0, 'received blocks are disjoint');
my %seen;
my $repeats = grep { $seen{$_}++ } @singles;
is($repeats, 0, 'received seq_next() values are unique');

my $max_block = $sorted[-1][1];
my $max_single = (sort { $a <=> $b } @singles)[-1];

# After recovery, the sequences go on above everything handed out.
my $next = $node->safe_psql('postgres',
    "SELECT next_block_start FROM id_sequences WHERE name = 'crash'");
cmp_ok($next, '>', $max_block, 'next_block_start is above every received block');

my $after = $node->safe_psql('postgres', q{
    SELECT min(first_id) FROM generate_series(1, 20),
        LATERAL seq_reserve_block('crash', 3 + generate_series)});
cmp_ok($after, '>', $max_block, 'new blocks do not overlap received ones');

my $after_single = $node->safe_psql('postgres', q{
    SELECT min(seq_next('crash_next')) FROM generate_series(1, 50)});
cmp_ok($after_single, '>', $max_single, 'new seq_next() values are above received ones');

$node->stop;
done_testing();
