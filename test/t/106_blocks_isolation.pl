# Isolation between databases for block sequences.  A role with nothing but
# CONNECT on another database, calling seq_next() and seq_reserve_block()
# there with names that do not exist, starts no allocator and takes no
# slot (so a real database never gets 53400 because of it) and takes no
# seq_next() cache entry; with real sequences of its own, it evicts only
# within its fair share of the cache.  Either way the victim database's
# sequences go on being served from the ranges they cached: no IDs
# skipped.  Also: a session's memory does not grow with the number of
# distinct names it passed to seq_next().
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('blocks_isolation');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'uidgen'
uidgen.block_cache_entries = 8
uidgen.block_databases = 3
uidgen.allocator_idle_timeout = 300s
});
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE mallory LOGIN');
for my $db (qw(prod app other spare1 spare2))
{
    $node->safe_psql('postgres', "CREATE DATABASE $db");
    $node->safe_psql($db, 'CREATE EXTENSION uidgen');
}
$node->safe_psql('prod',
    "SELECT seq_create('o' || i, block_size => 1000) FROM generate_series(1, 8) i");
$node->safe_psql('app', "SELECT seq_create('s', block_size => 10)");
$node->safe_psql('other', q{
    SELECT seq_create('r' || i, block_size => 5) FROM generate_series(1, 20) i;
    SELECT seq_create('h' || i, block_size => 1) FROM generate_series(1, 2000) i;});

# Run SQL in a database as mallory, who was granted nothing.
sub as_mallory
{
    my ($db, $sql) = @_;
    my ($ret, $out, $err) = $node->psql($db, $sql,
        extra_params => [ '-U', 'mallory', '-v', 'VERBOSITY=verbose' ]);
    return ($ret, $err);
}

# 1. Names that do not exist, in three databases (as many as there are
# allocator slots): 42704 at once, no allocator, no slot taken.
for my $db (qw(other spare1 spare2))
{
    for my $call ("SELECT seq_next('nope')", "SELECT * FROM seq_reserve_block('nope')",
        "SELECT * FROM seq_reserve_block('nope', 5)")
    {
        my ($ret, $err) = as_mallory($db, $call);
        like($err, qr/42704: block sequence "nope" does not exist/, "$db: $call: 42704");
    }
}
is($node->safe_psql('postgres',
    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'"),
    '0', 'unknown names started no allocator');
my ($ret, $out, $err) = $node->psql('prod', "SELECT seq_next('o1')",
    extra_params => [ '-v', 'VERBOSITY=verbose' ]);
is($out, '1', 'then a real database gets its allocator slot for seq_next()') or diag($err);
($ret, $out, $err) = $node->psql('app', "SELECT first_id, last_id FROM seq_reserve_block('s')",
    extra_params => [ '-v', 'VERBOSITY=verbose' ]);
is($out, '1|10', 'and another one for seq_reserve_block()') or diag($err);
# (seq_reserve_block() of strategy 'table' took a cache entry in app, which
# seq_advance() gives back: prod has all eight below)
$node->safe_psql('app', "SELECT seq_advance('s', 0)");
# (the rest does not depend on this part's outcome: no allocator is left)
$node->safe_psql('postgres',
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
$node->poll_query_until('postgres',
    "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'")
  or die 'allocators did not exit';

# Where prod's first $nseqs sequences are (they all start at 1): the sum of their next
# IDs, from the cache where it holds them (block prefetch), less 1 each.  An
# entry lost to eviction skips what it held: the sum jumps by more than
# what was served.
sub prod_position
{
    my ($nseqs) = @_;
    return $node->safe_psql('prod',
        "SELECT sum(coalesce(next_id, next_block_start) - 1) FROM id_sequences_prefetch "
          . "WHERE name IN (SELECT 'o' || i FROM generate_series(1, $nseqs) i)");
}

# Serve 200 IDs in 5 rounds from prod's first $nseqs sequences, each round
# followed by mallory's calls in database "other"; the IDs reserved to
# serve them.
sub rounds
{
    my ($label, $nseqs, $mallory_sql) = @_;
    my $before = prod_position($nseqs);
    my $served = 0;
    for my $round (1 .. 5)
    {
        $served += $node->safe_psql('prod',
            "SELECT count(DISTINCT (s, seq_next('o' || s))) FROM generate_series(1, $nseqs) s, "
              . 'generate_series(1, ' . (40 / $nseqs) . ')');
        my ($ret, $err) = as_mallory('other', sprintf($mallory_sql, $round));
        is($ret, 0, "$label, round $round: mallory's calls ran") or diag($err);
    }
    my $skipped = prod_position($nseqs) - $before - $served;
    note("$label: prod served $served IDs, skipped $skipped");
    is($served, 200, "$label: prod served 200 IDs");
    is($skipped, 0,
        "$label: prod skipped no IDs: each sequence serves from the range it cached");
    return;
}

# 2. Made-up names in "other" take no cache entry, not even within a fair
# share: prod keeps all eight.
$node->safe_psql('prod', "SELECT seq_next('o' || i) FROM generate_series(1, 8) i");
rounds('made-up names', 8, q{DO $$BEGIN
    FOR i IN 1 .. 16 LOOP
        BEGIN
            PERFORM seq_next(format('fake_%s_%%s', i));
        EXCEPTION WHEN undefined_object THEN NULL;
        END;
    END LOOP;
END$$;});

# 3. Real sequences of "other", more than the cache holds: "other" evicts
# only among its own entries beyond its fair share (8 entries / 2
# databases), so prod keeps four (the four it goes on using).
rounds('real sequences of another database', 4,
    q{SELECT count(seq_next('r' || i)) FROM generate_series(1, 20) i -- %s});
is($node->safe_psql('postgres',
    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'uidgen allocator' AND datname = 'prod'"),
    '1', 'prod has its allocator throughout');

# 4. A session's memory does not grow with the distinct names it passed to
# seq_next(): 20,000 that do not exist and 2,000 that do.
my $mem = $node->safe_psql('other', q{
    SELECT seq_next('h' || i) FROM generate_series(1, 50) i \g /dev/null
    SELECT sum(total_bytes) FROM pg_backend_memory_contexts;
    DO $$BEGIN
        FOR i IN 1 .. 20000 LOOP
            BEGIN
                PERFORM seq_next('made_up_' || i);
            EXCEPTION WHEN undefined_object THEN NULL;
            END;
        END LOOP;
    END$$;
    SELECT seq_next('h' || i) FROM generate_series(1, 2000) i \g /dev/null
    SELECT sum(total_bytes) FROM pg_backend_memory_contexts;});
my ($mem_before, $mem_after) = split /\n/, $mem;
my $growth = $mem_after - $mem_before;
note("backend memory: $mem_before bytes before, $mem_after after");
cmp_ok($growth, '<', 64 * 1024,
    "22,000 distinct names grew the session's memory by $growth bytes only");

$node->stop;
done_testing();
