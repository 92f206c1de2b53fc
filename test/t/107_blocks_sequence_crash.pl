# Block sequences of strategy 'sequence' survive a crash of the whole
# server: kill -9 of the postmaster and of every process it started, after
# clients received blocks, with synchronous_commit off and a lazy WAL
# writer.  A nextval() logs 32 values ahead and its transaction's commit is
# asynchronous there, so only the allocator's forced synchronous commit and
# its flush of the sequence's WAL record keep a block from being handed out
# again after crash recovery.  Afterwards no block and no seq_next() value
# repeats one received before the crash, and the tables and the native
# sequences go on above them.  A sequence counting down by 3 ("natd": its
# native sequence's increment is -3 * 97) streams too: no block of it after
# the crash overlaps one before, and its native sequence goes on below them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;
use IPC::Run;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('blocks_sequence_crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'uidgen'
synchronous_commit = off
wal_writer_delay = 10s
wal_writer_flush_after = 1GB
checkpoint_timeout = 1h
uidgen.block_timeout = '10min'
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('nat', block_size => 97, strategy => 'sequence');
    SELECT seq_create('nat_next', block_size => 13, strategy => 'sequence');
    SELECT seq_create('tab', block_size => 97);
    SELECT seq_create('natd', start => 0, block_size => 97, increment => -3,
                      strategy => 'sequence');
    CHECKPOINT;
});

# Streaming clients: reservations, one per statement and transaction, and
# seq_next() values.  They stop at the crash (ON_ERROR_STOP).
my $dir = $PostgreSQL::Test::Utils::tmp_check;
my %script = (
    nat => "SELECT first_id, last_id FROM seq_reserve_block('nat');\n",
    tab => "SELECT first_id, last_id FROM seq_reserve_block('tab');\n",
    natd => "SELECT first_id, last_id FROM seq_reserve_block('natd');\n",
    next => "SELECT seq_next('nat_next');\n",
);
my (@clients, @outputs);
for my $kind (qw(nat nat tab natd next))
{
    my $i = scalar @clients;
    my $sql = "$dir/blocks_sequence_crash_$i.sql";
    my $out = "$dir/blocks_sequence_crash_$i.out";
    unlink $sql, $out;
    PostgreSQL::Test::Utils::append_to_file($sql, $script{$kind} x 100000);
    push @clients, IPC::Run::start(
        [ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1',
          '-d', $node->connstr('postgres'), '-f', $sql ],
        '>', $out, '2>', "$out.err");
    push @outputs, [ $kind, $out ];
}

# Let them stream until each has had a few hundred answers: many times 32
# nextval() calls, so several WAL records of each native sequence.
ok(wait_for_lines(300, map { $_->[1] } @outputs), 'every streaming client received answers');

# kill -9 of the postmaster and of all its children at once: nothing is
# flushed on the way down, and the WAL buffers are lost.
my $postmaster = $node->{_pid};
my @children;
for my $stat (glob '/proc/[0-9]*/stat')
{
    open my $fh, '<', $stat or next;
    my $line = <$fh>;
    close $fh;
    next unless defined $line && $line =~ /^(\d+) \(.*\) \S+ (\d+) /;
    push @children, $1 if $2 == $postmaster;
}
cmp_ok(scalar(@children), '>', 3, 'found the server processes');
kill 'KILL', $postmaster, @children;
usleep(10_000) while grep { kill 0, $_ } $postmaster, @children;
$_->finish for @clients;
# as PostgreSQL::Test::Cluster's kill9() does after its kill
$node->{_pid} = undef;
$node->start;
pass('the server started again, through crash recovery');

# What the clients received before the crash.
my (%blocks, @singles);
for my $o (@outputs)
{
    my $text = PostgreSQL::Test::Utils::slurp_file($o->[1]);
    for my $line (split /\n/, $text)
    {
        if ($o->[0] ne 'next' && $line =~ /^(-?\d+)\|(-?\d+)$/)
        {
            push @{ $blocks{ $o->[0] } }, [ $1, $2 ];
        }
        elsif ($o->[0] eq 'next' && $line =~ /^(\d+)$/)
        {
            push @singles, $1;
        }
    }
}
cmp_ok(scalar(@{ $blocks{nat} }), '>=', 600, 'blocks of "nat" were received');
cmp_ok(scalar(@{ $blocks{natd} }), '>=', 300, 'blocks of "natd" were received');

# After recovery, as many again: none overlaps one received before
# (a block counting down, first_id > last_id, as the interval it spans).
for my $name (qw(nat tab natd))
{
    my @new = map { [ split /\|/ ] } split /\n/, $node->safe_psql('postgres', qq{
        SELECT (b).first_id || '|' || (b).last_id FROM (
            SELECT seq_reserve_block('$name') AS b FROM generate_series(1, 700)
            OFFSET 0) AS s});
    is(scalar(@new), 700, "700 new blocks of \"$name\"");
    my @sorted = sort { $a->[0] <=> $b->[0] }
      map { $_->[0] <= $_->[1] ? $_ : [ $_->[1], $_->[0] ] } @{ $blocks{$name} }, @new;
    my $overlaps = 0;
    for my $i (1 .. $#sorted)
    {
        next unless $sorted[$i][0] <= $sorted[ $i - 1 ][1];
        $overlaps++;
        diag("$name: [@{ $sorted[ $i - 1 ] }] and [@{ $sorted[$i] }] overlap")
          if $overlaps <= 3;
    }
    is($overlaps, 0, "\"$name\": no block after the crash overlaps one received before");
}
my @new_singles = split /\n/, $node->safe_psql('postgres',
    q{SELECT seq_next('nat_next') FROM generate_series(1, 2000)});
my %seen;
my $repeats = grep { $seen{$_}++ } @singles, @new_singles;
is($repeats, 0, 'seq_next() of "nat_next": no value repeats across the crash');

$node->stop;
done_testing();
