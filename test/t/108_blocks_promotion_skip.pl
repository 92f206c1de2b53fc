# Block sequences across an asynchronous failover: before it serves the
# first block on a new timeline, the promoted server skips every sequence
# ahead by uidgen.promotion_skip values, so that blocks the old primary
# handed out after the last commit the standby received are not handed out
# again (as long as fewer than promotion_skip values per sequence were
# handed out in that lag).
#
# The standby misses commits deterministically: it is stopped, the primary
# hands out blocks and seq_next() values (recorded here) and is stopped
# with "immediate", so that their WAL never reaches the standby, which is
# then started and promoted.  With uidgen.promotion_skip = 0 the promoted
# server hands many of them out again (the defect, shown first); with the
# default none, for strategies 'table' and 'sequence' and for seq_next(),
# in every database.  A second promotion (timeline 3) skips again, also
# after a kill -9 in the middle of the commit of its first attempt (the
# skip and its record commit together, so it is made again, never lost),
# and a row locked by a caller, or the table of the timeline locked by
# another transaction, makes the caller wait for the locker, not the
# allocator; a database whose objects are still 0.1.0's does not skip and
# logs once why (with the fix); a restart does not skip again; a skip near max_value
# exhausts the sequence (2200H) instead of wrapping; pg_dump does not carry
# the timeline, so a restore on another server does not skip.
# With steps (issue 22): the skip counts IDs, so a sequence with increment 7
# skips promotion_skip * 7 values and stays on its lattice, one counting
# down moves down, and one near either end of bigint is exhausted, without
# an overflow; the same for strategy 'sequence' (its native sequence moves
# by promotion_skip * increment values).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;
use IPC::Run;

# Blocks handed out in the lag, per sequence: 100 blocks of 1000 IDs, and
# 20000 seq_next() values (blocks of 100), far below the default skip.
my $lag_blocks = 100;
my $lag_nexts = 20000;
my $skip = 1000000;
my @dbs = ('postgres', 'other');

my $primary = uidgen_node('primary', init => { allows_streaming => 1 });
$primary->safe_psql('postgres', 'CREATE DATABASE other');
for my $db (@dbs)
{
    $primary->safe_psql($db, q{
        CREATE EXTENSION IF NOT EXISTS uidgen;
        SELECT seq_create('tab', block_size => 1000);
        SELECT seq_create('nat', block_size => 1000, strategy => 'sequence');
        SELECT seq_create('nxt', block_size => 100);
    });
}
# steps (in "postgres" only): increment 7 from 3, and -3 from 0
$primary->safe_psql('postgres', q{
    SELECT seq_create('st7', start => 3, increment => 7, block_size => 100);
    SELECT seq_create('sdn', start => 0, increment => -3, block_size => 100);
    SELECT seq_create('nst7', start => 3, increment => 7, block_size => 100,
                      strategy => 'sequence');
    SELECT seq_create('nsdn', start => 0, increment => -3, block_size => 100,
                      strategy => 'sequence');
});

# What $node's database $db handed out: n blocks of each of tab and nat,
# and m values of seq_next('nxt').  { tab => [[first, last], ...], ... }
sub hand_out
{
    my ($node, $db, $n, $m) = @_;
    my %got;
    for my $seq ('tab', 'nat')
    {
        $got{$seq} = [ map { [ split /\|/ ] } split /\n/, $node->safe_psql($db, qq{
            SELECT (b).first_id || '|' || (b).last_id FROM (
                SELECT seq_reserve_block('$seq') AS b FROM generate_series(1, $n)
                OFFSET 0) AS s}) ];
    }
    $got{nxt} = [ map { [ $_, $_ ] } split /\n/, $node->safe_psql($db,
        "SELECT seq_next('nxt') FROM generate_series(1, $m)") ];
    return \%got;
}

# Add what hand_out() returned to the record of everything handed out.
sub record
{
    my ($all, $got) = @_;
    push @{ $all->{$_} }, @{ $got->{$_} } for keys %$got;
    return;
}

# A streaming (asynchronous) standby of $upstream, caught up, with extra
# settings, and a worker id of its own, as every member of a replication
# cluster has (a copy with its origin's worker id refuses block sequences
# until uidgen_take_over(): 091_copies.pl).
my $last_worker_id = 0;
sub make_standby
{
    my ($name, $upstream, $conf) = @_;
    $upstream->backup("bk_$name");
    my $node = PostgreSQL::Test::Cluster->new($name);
    $node->init_from_backup($upstream, "bk_$name", has_streaming => 1);
    $last_worker_id++;
    $node->append_conf('postgresql.conf',
        "uidgen.worker_id = $last_worker_id\n" . ($conf // ''));
    $node->start;
    $upstream->wait_for_catchup($node);
    return $node;
}

# The failover: the standby is stopped, the old primary hands out blocks
# it never sends and stops at once; the standby is started and promoted.
# Returns, per database, what the old primary handed out in the lag.
sub failover
{
    my ($old, $standby, $all) = @_;
    $standby->stop;
    my %lag;
    for my $db (@dbs)
    {
        $lag{$db} = hand_out($old, $db, $lag_blocks, $lag_nexts);
        record($all->{$db}, $lag{$db});
    }
    $old->stop('immediate');
    $standby->start;
    $standby->promote;
    $standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
      or die 'the standby was not promoted';
    return \%lag;
}

# Per database: what the promoted $node hands out, compared with all the
# old primary ($all) handed out; also recorded in $all.
sub check_after
{
    my ($node, $all, $what, $expect_zero) = @_;
    my %ids;
    for my $db (@dbs)
    {
        my $got = hand_out($node, $db, $lag_blocks, $lag_nexts);
        for my $seq (sort keys %$got)
        {
            $ids{"$db.$seq"} = range_overlap($all->{$db}{$seq}, $got->{$seq});
            if ($expect_zero)
            {
                is($ids{"$db.$seq"}, 0, "$what: $db.$seq: no ID handed out again");
            }
            else
            {
                cmp_ok($ids{"$db.$seq"}, '>', 0,
                    "$what: $db.$seq: IDs are handed out again (the defect)");
            }
        }
        record($all->{$db}, $got);
    }
    note("$what: IDs handed out twice: "
          . join(', ', map { "$_ $ids{$_}" } sort keys %ids));
    return;
}

# The next ID of each sequence of $db as id_sequences tells, and its
# timeline record.
sub next_unused
{
    my ($node, $db) = @_;
    return { map { split /\|/ } split /\n/, $node->safe_psql($db,
        'SELECT name, seq_next_unused(s) FROM id_sequences s') };
}

sub timeline_of
{
    my ($node, $db) = @_;
    return $node->safe_psql($db, 'SELECT timeline FROM id_sequences_timeline');
}

my $skipped = qr/LOG:  uidgen skipped every block sequence of database "(\w+)" ahead by (\d+) values after the timeline changed from (\d+) to (\d+)/;
my $skipped_any = qr/uidgen skipped every block sequence/;

# The first IDs $node's database $db hands out after the promotion, and
# where $known (next_unused() as the standby saw it before it stopped) says
# they should be: exactly the skip above.  (For strategy 'sequence' the
# standby saw the native sequence's last WAL record, which logs 32 values
# ahead of the primary.  After an attempt that did not commit, its native
# sequence may have been moved already, as setval() is not undone, and
# then skips twice: $twice.)  Recorded in $all.
sub check_first
{
    my ($node, $db, $known, $all, $what, $twice) = @_;
    my $got = hand_out($node, $db, 1, 1);
    is($got->{tab}[0][0], $known->{tab} + $skip,
        "$what: $db.tab: the first block starts $skip above the standby's next_block_start");
    my $nat = $got->{nat}[0][0];
    ok($nat == $known->{nat} + $skip || ($twice && $nat == $known->{nat} + 2 * $skip),
        "$what: $db.nat: the first block starts $skip above the standby's position"
          . ($twice ? ' (or twice that)' : ''))
      or diag("got $nat, the standby's position was $known->{nat}");
    note("$what: $db.nat skipped " . (($nat - $known->{nat}) / $skip) . ' times') if $twice;
    is($got->{nxt}[0][0], $known->{nxt} + $skip,
        "$what: $db.nxt: the first seq_next() value is $skip above the standby's next_block_start");
    record($all->{$db}, $got);
    return;
}

######## a fresh install does not skip
my %all = map { $_ => {} } @dbs;
for my $db (@dbs)
{
    my $got = hand_out($primary, $db, 10, 1000);
    is($got->{tab}[0][0], 1, "$db: a fresh install starts at 1 (table)");
    is($got->{nat}[0][0], 1, "$db: a fresh install starts at 1 (sequence)");
    record($all{$db}, $got);
}
is(timeline_of($primary, 'postgres'), '1', 'the install records timeline 1');
is(count_in_log($primary, $skipped_any), 0, 'no skip on the first timeline');

######## without the skip (uidgen.promotion_skip = 0), blocks are handed out again
my $s1 = make_standby('s1', $primary, "uidgen.promotion_skip = 0\n");
failover($primary, $s1, \%all);
check_after($s1, \%all, 'promotion_skip = 0', 0);
is(count_in_log($s1, qr/uidgen did not skip the block sequences of database "postgres" ahead after the timeline changed from 1 to 2/),
    1, 'promotion_skip = 0: logged once for database "postgres"');
is(timeline_of($s1, 'postgres'), '2', 'promotion_skip = 0: timeline 2 recorded all the same');
$s1->stop;

######## with the default skip, none is handed out again
# The old primary goes on from its own state (it kept every block it
# handed out); a new standby of it fails over the same way.
$primary->start;
%all = map { $_ => {} } @dbs;
for my $db (@dbs)
{
    record($all{$db}, hand_out($primary, $db, 10, 1000));
}
my $s2 = make_standby('s2', $primary);
for my $db (@dbs)
{
    record($all{$db}, hand_out($primary, $db, 10, 1000));
}
my %steps = map { $_ => [ split /\n/, $primary->safe_psql('postgres',
    "SELECT seq_next('$_') FROM generate_series(1, 150)") ] } ('st7', 'sdn', 'nst7', 'nsdn');
is("$steps{st7}[0] $steps{st7}[149] $steps{sdn}[0] $steps{sdn}[149]",
    '3 ' . (3 + 149 * 7) . ' 0 ' . (0 - 149 * 3),
    'steps: 3, 10, ... and 0, -3, ... before the promotion');
is("$steps{nst7}[0] $steps{nst7}[149] $steps{nsdn}[0] $steps{nsdn}[149]",
    '3 ' . (3 + 149 * 7) . ' 0 ' . (0 - 149 * 3),
    "steps, strategy 'sequence': the same values before the promotion");
$primary->wait_for_catchup($s2);
my %known = map { $_ => next_unused($s2, $_) } @dbs;
my $log_offset = -s $s2->logfile;
failover($primary, $s2, \%all);
check_first($s2, $_, $known{$_}, \%all, 'promotion') for @dbs;
my $st7 = $s2->safe_psql('postgres', "SELECT seq_next('st7')");
is($st7, $known{postgres}{st7} + 7 * $skip,
    "steps: increment 7 skips $skip * 7 values above the standby's next_block_start");
is(($st7 - 3) % 7, 0, 'steps: and stays on its lattice (3 + 7 k)');
cmp_ok($known{postgres}{st7}, '>', $steps{st7}[149], 'steps: (the standby had the values handed out)');
my $sdn = $s2->safe_psql('postgres', "SELECT seq_next('sdn')");
is($sdn, $known{postgres}{sdn} - 3 * $skip,
    "steps: increment -3 moves $skip * 3 values down from the standby's next_block_start");
is((0 - $sdn) % 3, 0, 'steps: and stays on its lattice (-3 k)');
my $nst7 = $s2->safe_psql('postgres', "SELECT seq_next('nst7')");
is($nst7, $known{postgres}{nst7} + 7 * $skip,
    "steps, strategy 'sequence': increment 7 skips $skip * 7 values above the standby's position");
is(($nst7 - 3) % 7, 0, "steps, strategy 'sequence': on its lattice (3 + 7 k)");
cmp_ok($known{postgres}{nst7}, '>', $steps{nst7}[149],
    "steps, strategy 'sequence': (the standby had the values handed out)");
my $nsdn = $s2->safe_psql('postgres', "SELECT seq_next('nsdn')");
is($nsdn, $known{postgres}{nsdn} - 3 * $skip,
    "steps, strategy 'sequence': increment -3 moves $skip * 3 values down from the standby's position");
is((0 - $nsdn) % 3, 0, "steps, strategy 'sequence': on its lattice (-3 k)");
cmp_ok($known{postgres}{nsdn}, '<', $steps{nsdn}[149],
    "steps, strategy 'sequence': (the standby had the values handed out, counting down)");
check_after($s2, \%all, 'default skip', 1);
my %logged;
my $log = slurp_file($s2->logfile, $log_offset);
$logged{$1} = "$2 $3 $4" while $log =~ /$skipped/g;
is_deeply(\%logged, { postgres => "$skip 1 2", other => "$skip 1 2" },
    'one LOG line per database: skipped by 1000000 from timeline 1 to 2');
is(count_in_log($s2, $skipped_any, $log_offset), 2, 'and no more');
is(timeline_of($s2, $_), '2', "$_: timeline 2 recorded") for @dbs;

######## near max_value: exhausted (2200H), never wrapped
$s2->safe_psql('postgres', q{
    SELECT seq_create('tab_max', block_size => 1000, max_value => 500000);
    SELECT seq_create('tab_top', start => 9223372036854000000, block_size => 1000);
    SELECT seq_create('nat_top', start => 9223372036854000000, block_size => 1000,
                      strategy => 'sequence');
    SELECT seq_create('st_top', start => 9223372036854775807 - 500000000, block_size => 10,
                      increment => 1000);
    SELECT seq_create('st_bot', start => -9223372036854775808 + 500000000, block_size => 10,
                      increment => -1000);
});
for my $seq ('tab_max', 'tab_top', 'nat_top', 'st_top', 'st_bot')
{
    $s2->safe_psql('postgres', "SELECT * FROM seq_reserve_block('$seq')");
}

# For the second promotion: sequences to lock and to ask for, and a
# deferred trigger that holds the commit of an allocator's round that
# updated "held" (as the skip does) while the test holds advisory lock 4242.
$s2->safe_psql('postgres', q{
    SELECT seq_create('held');
    SELECT seq_create('lck');
    SELECT seq_create('lck2');
    CREATE FUNCTION hold_allocator() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF current_setting('application_name') = 'uidgen allocator' THEN
            PERFORM pg_catalog.pg_advisory_xact_lock(4242);
        END IF;
        RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER hold_allocator AFTER UPDATE ON id_sequences
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (OLD.name = 'held') EXECUTE FUNCTION hold_allocator();
});

# and, in the other database, one whose request meets a lock on the table
# of the timeline
$s2->safe_psql('other', "SELECT seq_create('tlck')");
# A database whose extension objects are still 0.1.0's: no table to record
# a skip in, so it cannot skip, and says so once.
$s2->safe_psql('postgres', 'CREATE DATABASE old010');
$s2->safe_psql('old010', q{
    CREATE EXTENSION uidgen VERSION '0.1.0';
    SELECT seq_create('tab', block_size => 1000);
    SELECT * FROM seq_reserve_block('tab');
});

######## a second promotion (timeline 3) skips again
my $s3 = make_standby('s3', $s2, "restart_after_crash = on\n");
$primary->stop;
$s2->wait_for_catchup($s3);
%known = map { $_ => next_unused($s3, $_) } @dbs;
$log_offset = -s $s3->logfile;
failover($s2, $s3, \%all);

# kill -9 of the allocator while the commit of the skip is held: crash
# restart, and nothing of the skip remains.
my $holder = $s3->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(4242)');
my ($held_out, $held_err) = ('', '');
my $held = IPC::Run::start(
    [ 'psql', '-XAt', '-d', $s3->connstr('postgres'),
      '-c', "SELECT first_id FROM seq_reserve_block('lck2')" ],
    '>', \$held_out, '2>', \$held_err);
ok($s3->poll_query_until('postgres', q{
    SELECT count(*) = 1 FROM pg_stat_activity
    WHERE backend_type = 'uidgen allocator'
      AND wait_event_type = 'Lock' AND wait_event = 'advisory'}),
    'the commit of the skip is held');
my $allocator = $s3->safe_psql('postgres',
    "SELECT pid FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
my $crash_offset = -s $s3->logfile;
kill 'KILL', $allocator;
$s3->wait_for_log(qr/all server processes terminated; reinitializing/, $crash_offset);
# (through the restart's start, which may break psql's pipe)
poll_through_crashes($s3, 'SELECT true')
  or die 'the server did not come back';
eval { $held->finish; };
eval { $holder->quit; };
is($held_out, '', 'the client whose request made the skip received nothing');
$s3->safe_psql('postgres', 'DROP TRIGGER hold_allocator ON id_sequences');
is(timeline_of($s3, 'postgres'), '2', 'after the crash, the skip is not recorded');
is(next_unused($s3, 'postgres')->{tab}, $known{postgres}{tab}, 'nor made');
is(count_in_log($s3, $skipped_any, $log_offset), 0, 'nor logged');

# A caller whose own transaction holds a row the skip needs is refused at
# once (even for another sequence: the skip moves them all).
like(psql_error($s3, q{
    BEGIN;
    SELECT 1 FROM id_sequences WHERE name = 'lck' FOR UPDATE;
    SELECT * FROM seq_reserve_block('lck2');}),
    qr/ERROR:  55000: block sequence "lck2" is locked by the current transaction/,
    'a row locked by the caller itself: 55000');

# Another transaction in database $db holds a lock the skip needs ($lock,
# run in its open transaction): a caller reserving from $seq waits for it as
# a lock wait in pg_locks (matched by $which), the allocator does not, and
# the caller gets its block, skipped, once the locker ends.
sub lock_wait
{
    my ($db, $lock, $which, $seq, $what) = @_;
    my $locker = $s3->background_psql($db);
    $locker->query_safe("BEGIN; $lock");
    my ($out, $err) = ('', '');
    my $waiter = do {
        local $ENV{PGAPPNAME} = "$seq waiter";
        IPC::Run::start(
            [ 'psql', '-XAt', '-d', $s3->connstr($db),
              '-c', "SELECT first_id FROM seq_reserve_block('$seq')" ],
            '>', \$out, '2>', \$err);
    };
    ok($s3->poll_query_until($db, qq{
        SELECT count(*) = 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE NOT l.granted AND $which AND a.application_name = '$seq waiter'}),
        "$what: the caller waits for it in pg_locks");
    is($s3->safe_psql($db, q{
        SELECT count(*) FROM pg_stat_activity
        WHERE backend_type = 'uidgen allocator' AND wait_event_type = 'Lock'}),
        '0', "$what: the allocator does not wait");
    $locker->query_safe('COMMIT');
    $waiter->finish;
    is($out, ($known{$db}{$seq} + $skip) . "\n",
        "$what: once the locker ends, the caller gets its block, the skip above");
    $locker->quit;
    return;
}
lock_wait('postgres', q{SELECT 1 FROM id_sequences WHERE name = 'lck' FOR UPDATE},
    q{l.locktype = 'transactionid'}, 'lck2', 'a row locked by another transaction');
# (the table of the timeline in SHARE mode, which the skip's ROW EXCLUSIVE
# conflicts with)
lock_wait('other', 'LOCK TABLE id_sequences_timeline IN SHARE MODE',
    q{l.locktype = 'relation' AND l.relation = 'id_sequences_timeline'::regclass},
    'tlck', 'the table of the timeline locked by another transaction');

check_first($s3, $_, $known{$_}, \%all, 'second promotion', $_ eq 'postgres') for @dbs;

# The 0.1.0 database: its next block follows the last one (no skip), and
# the LOG line that says why, with the fix, comes once for its allocator.
# (next_block_start is the end of what was committed, prefetched included)
my $old_end = $s3->safe_psql('old010', "SELECT next_block_start FROM id_sequences WHERE name = 'tab'");
cmp_ok($old_end, '<', 1000000, '0.1.0 objects: next_block_start below the skip');
is($s3->safe_psql('old010', "SELECT first_id FROM seq_reserve_block('tab')"), $old_end,
    '0.1.0 objects: no skip after the promotion');
$s3->safe_psql('old010', "SELECT * FROM seq_reserve_block('tab')");
is(count_in_log($s3, qr/LOG:  uidgen cannot skip the block sequences of database "old010" ahead after a timeline change\n.*DETAIL:  Table id_sequences_timeline, which records the timeline of the last skip, does not exist in the database\.\n.*HINT:  Run ALTER EXTENSION uidgen UPDATE in the database\./, $log_offset),
    1, '0.1.0 objects: said once, with the fix');
check_after($s3, \%all, 'second promotion', 1);
is(count_in_log($s3, qr/uidgen skipped every block sequence of database "postgres" ahead by $skip values after the timeline changed from 2 to 3/, $log_offset),
    1, 'second promotion: logged, from timeline 2 to 3');
is(timeline_of($s3, 'postgres'), '3', 'second promotion: timeline 3 recorded');

for my $seq ('tab_max', 'tab_top', 'nat_top', 'st_top', 'st_bot')
{
    like(psql_error($s3, "SELECT * FROM seq_reserve_block('$seq')"),
        qr/ERROR:  2200H: block sequence "$seq" has reached its (maximum|minimum) value/,
        "$seq: exhausted by the skip (2200H)");
}
is($s3->safe_psql('postgres', q{
    SELECT string_agg(name || ' ' || exhausted, ', ' ORDER BY name)
    FROM id_sequences WHERE name IN ('st_top', 'st_bot')}),
    'st_bot true, st_top true',
    'steps: a skip of 1000 * 1000000 past either end of bigint exhausts, without an overflow');
is(count_in_log($s3, qr/bigint out of range|overflow/, $log_offset), 0,
    'steps: no overflow logged');
is( $s3->safe_psql('postgres', q{
    SELECT string_agg(name || ' ' || next_block_start || ' ' || exhausted || ' '
                      || seq_next_unused(s), ', ' ORDER BY name)
    FROM id_sequences s WHERE name IN ('tab_max', 'tab_top', 'nat_top')}),
    'nat_top 9223372036854775807 true 9223372036854775807, '
      . 'tab_max 500001 true 500001, '
      . 'tab_top 9223372036854775807 true 9223372036854775807',
    'the skip stops at max_value + 1 (and at 2^63 - 1): exhausted, not wrapped');

######## a restart does not skip again
my $before = next_unused($s3, 'postgres');
$log_offset = -s $s3->logfile;
$s3->restart;
is($s3->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('tab')"),
    $before->{tab}, 'after a restart, the next block follows the last one');
cmp_ok($s3->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('nat')"),
    '<', $before->{nat} + $skip, 'after a restart, strategy "sequence" does not skip either');
is(count_in_log($s3, qr/uidgen (skipped|did not skip)/, $log_offset), 0,
    'after a restart, no skip is logged');

######## pg_dump does not carry the timeline
# Restored on a server on timeline 1 (the first primary), the database
# records that timeline and goes on right above the dumped positions.
my $dump = $s3->basedir . '/dump.sql';
$s3->command_ok([ 'pg_dump', '-d', $s3->connstr('postgres'), '-f', $dump ], 'pg_dump');
unlike(slurp_file($dump), qr/id_sequences_timeline/, 'the dump does not mention id_sequences_timeline');
my $dumped = next_unused($s3, 'postgres');
$primary->start;
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
$primary->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
    '-d', $primary->connstr('restored'), '-f', $dump ], 'restore');
is(timeline_of($primary, 'restored'), '1', 'the restored database records its server\'s timeline');
is($primary->safe_psql('restored', "SELECT first_id FROM seq_reserve_block('tab')"),
    $dumped->{tab}, 'the restored database does not skip');

$primary->stop;
$s3->stop;
done_testing();
