# Block sequences of strategy 'gapless': the committed numbers are exactly
# start, start + 1, ... with no gap and no repeat.
#
# 1. Concurrent clients take numbers (seq_next() and blocks of 3 from
#    seq_reserve_block()) into a table whose primary key catches a repeat,
#    and commit or roll back at random, for a few seconds: the committed
#    numbers are exactly 1..N, and next_block_start is N + 1.
# 2. The same while the server is killed with kill -9: after crash
#    recovery, every number whose commit was acknowledged is there, the
#    committed numbers are exactly 1..M, and the next number is M + 1.
#    Also for a sequence with increment 3 (start 5), used at the same time:
#    exactly 5, 8, ..., 5 + 3 (M - 1), and the next number is 5 + 3 M.
# 3. A promotion does not skip a gapless sequence (a sequence of strategy
#    'table' in the same database does): the promoted standby goes on from
#    the last number it received.  Nor does the skip wait for a caller that
#    holds the gapless row.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('gapless', init => { allows_streaming => 1 },
    restart_after_crash => 'on');
$node->safe_psql('postgres', q{
    SELECT seq_create('inv', strategy => 'gapless', block_size => 3);
    CREATE TABLE invoices (n bigint PRIMARY KEY);
    SELECT seq_create('inv3', strategy => 'gapless', block_size => 3, start => 5, increment => 3);
    CREATE TABLE invoices3 (n bigint PRIMARY KEY);
});

# A client's script: $count transactions, each taking one number or a
# block of 3, then committing or rolling back at random (one in three
# rolls back).  After each commit it prints "ack", so that the numbers
# printed before an "ack" are the acknowledged ones.
sub client_script
{
    my ($count, $seq, $table) = @_;
    $seq //= 'inv';
    $table //= 'invoices';
    my $step = $seq eq 'inv3' ? 3 : 1;
    my $sql = '';
    for (1 .. $count)
    {
        $sql .= "BEGIN;\n";
        if (rand() < 0.5)
        {
            $sql .= "INSERT INTO $table SELECT seq_next('$seq') RETURNING n;\n";
        }
        else
        {
            $sql .= "INSERT INTO $table SELECT generate_series(first_id, last_id, $step)"
              . " FROM seq_reserve_block('$seq') RETURNING n;\n";
        }
        $sql .= rand() < 1 / 3 ? "ROLLBACK;\n\\echo rb\n" : "COMMIT;\n\\echo ack\n";
    }
    return $sql;
}

# The numbers each client saw acknowledged (printed before an "ack").
sub acknowledged
{
    my ($clients) = @_;
    my @acked;
    for my $c (@$clients)
    {
        my @pending;
        for my $line (split /\n/, slurp_file($c->{out}))
        {
            if ($line eq 'ack') { push @acked, @pending; @pending = (); }
            elsif ($line eq 'rb') { @pending = (); }
            elsif ($line =~ /^\d+$/) { push @pending, $line; }
        }
    }
    return @acked;
}

# count, min, max and distinct count of the committed numbers, and the
# sequence's next_block_start.
sub committed
{
    my ($n, $seq, $table) = @_;
    $seq //= 'inv';
    $table //= 'invoices';
    return $n->safe_psql('postgres', qq{
        SELECT count(*) || ' ' || coalesce(min(n), 0) || ' ' || coalesce(max(n), 0)
               || ' ' || count(DISTINCT n) || ' ' ||
               (SELECT next_block_start FROM id_sequences WHERE name = '$seq')
          FROM $table});
}

# 1. Random rollbacks.
my $clients = start_clients($node, map { client_script(300) } 1 .. 4);
stop_clients($clients);
is(client_errors($clients), '', 'part 1: no client failed (no repeat hit the primary key)');
my ($count, $min, $max, $distinct, $next) = split / /, committed($node);
cmp_ok($count, '>', 100, "part 1: $count numbers committed");
is("$min $max $distinct $next", "1 $count $count " . ($count + 1),
    'part 1: the committed numbers are exactly 1..N, and next_block_start is N + 1');
my @acked = acknowledged($clients);
is(scalar(@acked), $count, 'part 1: every committed number was acknowledged to its client');

# 2. kill -9 while clients take numbers (the last two from inv3, by 3).
$clients = start_clients($node, (map { client_script(100000) } 1 .. 4),
    (map { client_script(100000, 'inv3', 'invoices3') } 1 .. 2));
ok(wait_for_lines(150, map { $_->{out} } @$clients), 'part 2: the clients are taking numbers');
kill9_and_wait($node);
stop_clients($clients, 60);
$node->start;
my @clients3 = splice(@$clients, 4);
my @acked3 = acknowledged(\@clients3);
cmp_ok(scalar(@acked3), '>', 50, scalar(@acked3) . ' numbers by 3 acknowledged before the crash');
is($node->safe_psql('postgres',
    'SELECT count(*) FROM invoices3 WHERE n IN (' . join(',', @acked3) . ')'), scalar(@acked3),
    'part 2, increment 3: every acknowledged number is committed after recovery');
($count, $min, $max, $distinct, $next) = split / /, committed($node, 'inv3', 'invoices3');
is($node->safe_psql('postgres', 'SELECT count(*) FROM invoices3 WHERE (n - 5) % 3 <> 0'), '0',
    'part 2, increment 3: every committed number is 5 + 3 k');
is("$min $max $distinct $next", '5 ' . (5 + 3 * ($count - 1)) . " $count " . (5 + 3 * $count),
    "part 2, increment 3: the committed numbers are exactly 5, 8, ..., 5 + 3 (M - 1) (M = $count) after recovery");
is($node->safe_psql('postgres', q{INSERT INTO invoices3 SELECT seq_next('inv3') RETURNING n}),
    5 + 3 * $count, 'part 2, increment 3: the next number is 5 + 3 M');
@acked = acknowledged($clients);
cmp_ok(scalar(@acked), '>', 150, scalar(@acked) . ' numbers acknowledged before the crash');
my $present = $node->safe_psql('postgres',
    'SELECT count(*) FROM invoices WHERE n IN (' . join(',', @acked) . ')');
is($present, scalar(@acked), 'part 2: every acknowledged number is committed after recovery');
($count, $min, $max, $distinct, $next) = split / /, committed($node);
is("$min $max $distinct $next", "1 $count $count " . ($count + 1),
    "part 2: the committed numbers are exactly 1..M (M = $count) after recovery");
is($node->safe_psql('postgres', q{INSERT INTO invoices SELECT seq_next('inv') RETURNING n}),
    $count + 1, 'part 2: the next number is M + 1');

# 3. Promotion: no skip for 'gapless', the skip for 'table'.
$node->safe_psql('postgres', q{SELECT seq_create('tab', block_size => 10)});
$node->safe_psql('postgres', q{SELECT * FROM seq_reserve_block('tab')});
$node->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('gapless_standby');
$standby->init_from_backup($node, 'bk', has_streaming => 1);
$standby->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$standby->start;
my $last = $node->safe_psql('postgres', q{INSERT INTO invoices SELECT seq_next('inv') RETURNING n});
$node->wait_for_catchup($standby);
$node->stop('immediate');
# A transaction holding the gapless row (a caller that has not committed)
# does not hold up the first round on the new timeline, which skips the
# other sequences: the skip does not lock gapless rows.
my $holder = start_clients($standby,
    "SELECT count(*) FROM (SELECT pg_sleep(0.2) FROM generate_series(1, 600)"
    . " WHERE pg_is_in_recovery()) AS s;\n"
    . "BEGIN;\nSELECT seq_next('inv');\n\\echo holding\nSELECT pg_sleep(60);\nCOMMIT;\n");
$standby->promote;
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
sleep(1) while slurp_file($holder->[0]{out}) !~ /^holding$/m && time() < $deadline;
like(slurp_file($holder->[0]{out}), qr/^holding$/m,
    'part 3: a caller holds the gapless row on the promoted server');
my ($rc, $skipped, $err) = $standby->psql('postgres', q{SET lock_timeout = '5s';
    SELECT first_id > 1000000 FROM seq_reserve_block('tab')});
is("$rc $skipped $err", '0 t ',
    'part 3: the skip round does not wait for the caller holding the gapless row, and skips "table"');
$holder->[0]{h}->kill_kill;
$standby->poll_query_until('postgres',
    q{SELECT first_id > 1000000 FROM seq_reserve_block('tab')});
is($standby->safe_psql('postgres', q{INSERT INTO invoices SELECT seq_next('inv') RETURNING n}),
    $last + 1, 'part 3: and not a gapless one: it goes on from the last number received');
($count, $min, $max, $distinct, $next) = split / /, committed($standby);
is("$min $max $distinct $next", "1 $count $count " . ($count + 1),
    'part 3: the committed numbers are still exactly 1..N on the promoted server');

done_testing();
