# Block sequences survive kill -9 of the allocator, the process that commits
# them, even when it dies in the middle of its commit: a block is handed out
# only once its reservation is committed (and flushed), so no block handed
# out before the crash is handed out again after crash recovery.
#
# The window is held open deterministically: a deferred constraint trigger on
# id_sequences makes the allocator's commit wait on an advisory lock that the
# test holds, once its round includes a reservation of sequence "held".
# While the allocator sits in that commit (its UPDATE done, no commit record
# yet), the client asking for "held" must still be waiting; then the
# allocator is SIGKILLed, so that the postmaster resets shared memory (and
# the WAL buffers in it) and runs crash recovery.  Meanwhile other clients
# stream reservations and seq_next() values, with synchronous_commit off and
# a lazy WAL writer, so that an allocator that did not force its commits to
# disk would lose some of them in the crash.  Afterwards no block overlaps
# one any client received.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('blocks_crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'uidgen'
synchronous_commit = off
wal_writer_delay = 10s
wal_writer_flush_after = 1GB
restart_after_crash = on
uidgen.block_timeout = '10min'
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('crash', block_size => 97);
    SELECT seq_create('crash_next', block_size => 13);
    SELECT seq_create('held', block_size => 1000);
    -- holds a commit of the allocator that updated "held", before its
    -- commit record, while the test holds advisory lock 4242
    CREATE FUNCTION hold_allocator() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF current_setting('application_name') = 'uidgen allocator' THEN
            PERFORM pg_catalog.pg_advisory_xact_lock(4242);
        END IF;
        RETURN NULL;
    END $$;
});

# Streaming clients: reservations, one per statement and transaction, and
# seq_next() values.  They stop at the crash (ON_ERROR_STOP).
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
    unlink $sql, $out;
    PostgreSQL::Test::Utils::append_to_file($sql, $script{$kind} x 100000);
    my $h = IPC::Run::start(
        [ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1',
          '-d', $node->connstr('postgres'), '-f', $sql ],
        '>', $out, '2>', "$out.err");
    push @clients, $h;
    push @outputs, [ $kind, $out ];
}

# Let them stream until each has had a few hundred answers.
ok(wait_for_lines(300, map { $_->[1] } @outputs), 'every streaming client received answers');

# Hold the commit of the next round that reserves from "held".
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(4242)');
$node->safe_psql('postgres', q{
    CREATE CONSTRAINT TRIGGER hold_allocator AFTER UPDATE ON id_sequences
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (OLD.name = 'held') EXECUTE FUNCTION hold_allocator();
});

my ($held_out, $held_err) = ('', '');
my $held = do {
    local $ENV{PGAPPNAME} = 'held client';
    IPC::Run::start(
        [ 'psql', '-XAt', '-d', $node->connstr('postgres'),
          '-c', "SELECT first_id || '|' || last_id FROM seq_reserve_block('held')" ],
        '>', \$held_out, '2>', \$held_err);
};
ok($node->poll_query_until('postgres', q{
    SELECT count(*) = 1 FROM pg_stat_activity
    WHERE backend_type = 'uidgen allocator'
      AND wait_event_type = 'Lock' AND wait_event = 'advisory'}),
    'the allocator is held in its commit of the round reserving from "held"');
my $allocator = $node->safe_psql('postgres',
    "SELECT pid FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
$held->pump_nb;
is($node->safe_psql('postgres', q{
    SELECT state || ' ' || wait_event_type FROM pg_stat_activity
    WHERE application_name = 'held client'}),
    'active Extension',
    'the client asking for "held" is still waiting while the commit is held');
$held->pump_nb;
is($held_out, '', 'and has received no range');

# SIGKILL in the middle of the commit: crash restart.
my $log_offset = -s $node->logfile;
kill 'KILL', $allocator;
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
# (through the restart's start, which may break psql's pipe)
poll_through_crashes($node, 'SELECT true')
  or die 'the server did not come back';
pass('the server went through a crash restart');
eval { $held->finish; };
eval { $holder->quit; };
$_->finish for @clients;
# (IF EXISTS: with synchronous_commit off, its creation is lost in the crash
# unless a later commit of the allocator flushed it, which the prefetched
# ranges make rare)
$node->safe_psql('postgres', 'DROP TRIGGER IF EXISTS hold_allocator ON id_sequences');

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
my @held_blocks = map { /^(\d+)\|(\d+)$/ ? [ $1, $2 ] : () } split /\n/, $held_out;
is(scalar(@held_blocks), 0, 'the client asking for "held" never received a range');

# Received blocks are disjoint among themselves.
my @sorted = sort { $a->[0] <=> $b->[0] } @blocks;
my $overlaps = 0;
for my $i (1 .. $#sorted)
{
    $overlaps++ if $sorted[$i][0] <= $sorted[ $i - 1 ][1];
}
is($overlaps, 0, 'blocks received before the crash are disjoint');
my %seen;
my $repeats = grep { $seen{$_}++ } @singles;
is($repeats, 0, 'seq_next() values received before the crash are unique');

my $max_block = $sorted[-1][1];
my $max_single = (sort { $a <=> $b } @singles)[-1];

# After recovery, the sequences go on above everything handed out.
cmp_ok($node->safe_psql('postgres',
    "SELECT next_block_start FROM id_sequences WHERE name = 'crash'"),
    '>', $max_block, 'next_block_start of "crash" is above every received block');
cmp_ok($node->safe_psql('postgres', q{
    SELECT min(first_id) FROM generate_series(1, 20),
        LATERAL seq_reserve_block('crash', 3 + generate_series)}),
    '>', $max_block, 'new blocks of "crash" do not overlap received ones');
cmp_ok($node->safe_psql('postgres', q{
    SELECT min(seq_next('crash_next')) FROM generate_series(1, 50)}),
    '>', $max_single, 'new seq_next() values are above received ones');

my ($first, $last) = split /\|/, $node->safe_psql('postgres',
    "SELECT first_id, last_id FROM seq_reserve_block('held')");
my $held_overlaps = grep { $_->[0] <= $last && $first <= $_->[1] } @held_blocks;
is($held_overlaps, 0, 'the first block of "held" after the crash overlaps nothing received');

$node->stop;
done_testing();
