# A refill of seq_next()'s shared cache that is still in flight when its
# cache entry stops being the one it was taken for is thrown away when it
# arrives: it never serves the IDs of one sequence as those of another.
#
# The refill is held in flight deterministically: a deferred constraint
# trigger on id_sequences makes the allocator's commit wait on an advisory
# lock that the test holds (the allocator has reserved the block and not
# delivered it yet).  While it is held:
#
# 1. the database is dropped and recreated with the same OID, and a sequence
#    of the same name created with another start: its first seq_next() is
#    its start, not an ID of the block refilled for the dropped database;
# 2. the only cache entry (uidgen.block_cache_entries = 1) is taken over by
#    a sequence of another database, whose own allocator has taken a refill
#    of the entry in turn: the stale refill, arriving while the entry waits
#    for a refill again, is recognised by the entry's incarnation and not
#    served as IDs of the other sequence.
#
# (A sequence dropped and recreated by seq_drop()/seq_create() cannot race
# with its refill: the DELETE waits for the allocator's row lock, and the
# allocator hands the block out right after its commit.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('blocks_refill_race');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'uidgen'
uidgen.block_cache_entries = 1
uidgen.block_timeout = '5min'
});
$node->start;

# A database with uidgen, one sequence and the trigger that holds the
# allocator's commit of an update of that sequence while advisory lock 4242
# is held (advisory locks are per database).
sub setup_db
{
    my ($db, $seq, $start) = @_;
    $node->safe_psql('postgres', "CREATE DATABASE $db") if $db ne 'postgres';
    $node->safe_psql($db, qq{
        CREATE EXTENSION uidgen;
        SELECT seq_create('$seq', start => $start, block_size => 10);
        CREATE FUNCTION hold_allocator() RETURNS trigger LANGUAGE plpgsql AS \$\$
        BEGIN
            IF current_setting('application_name') = 'uidgen allocator' THEN
                PERFORM pg_catalog.pg_advisory_xact_lock(4242);
            END IF;
            RETURN NULL;
        END \$\$;
        CREATE CONSTRAINT TRIGGER hold_allocator AFTER UPDATE ON id_sequences
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
            EXECUTE FUNCTION hold_allocator();
    });
    return;
}

# A session of $db holding advisory lock 4242.
sub hold
{
    my ($db) = @_;
    my $s = $node->background_psql($db);
    $s->query_safe('SELECT pg_advisory_lock(4242)');
    return $s;
}

# Wait until the allocator of $db is held in its commit, or idle again.
sub allocator_in
{
    my ($db, $what) = @_;
    my $cond = $what eq 'commit'
      ? "wait_event_type = 'Lock' AND wait_event = 'advisory'"
      : "wait_event_type = 'Extension'";
    return $node->poll_query_until('postgres', qq{
        SELECT count(*) = 1 FROM pg_stat_activity
        WHERE backend_type = 'uidgen allocator' AND datname = '$db' AND $cond});
}

# n calls of seq_next() in one statement, in call order.
sub seq_next
{
    my ($db, $seq, $n) = @_;
    return $node->safe_psql($db,
        "SELECT string_agg(seq_next('$seq')::text, ',' ORDER BY g) FROM generate_series(1, $n) g");
}

# 1. Drop and recreate the database (same OID) while a refill is in flight.
setup_db('rdb', 's', 1);
# the first block is 1..10; the call that serves 2 (10% of it carved) asks
# for the next block
is(seq_next('rdb', 's', 1), '1', 'rdb: the first block is served');
my $holder = hold('rdb');
is(seq_next('rdb', 's', 1), '2', 'rdb: the call that asks for a refill returns at once');
ok(allocator_in('rdb', 'commit'), 'rdb: the refill is held in the allocator\'s commit');

my $oid = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'rdb'");
my ($drop_out, $drop_err) = ('', '');
my $dropper = IPC::Run::start(
    [ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
      '-c', 'DROP DATABASE rdb' ],
    '>', \$drop_out, '2>', \$drop_err);
# DROP DATABASE forgets the cache entries as soon as it has the database
# locked, then waits (up to 5 s) for the holder and the allocator to leave
ok($node->poll_query_until('postgres', qq{
    SELECT count(*) = 1 FROM pg_locks
    WHERE locktype = 'object' AND classid = 'pg_database'::regclass
      AND objid = $oid AND mode = 'AccessExclusiveLock' AND granted}),
    'DROP DATABASE has the database locked while the refill is held');
$holder->quit;    # the refill arrives, the allocator leaves
ok($dropper->finish, 'DROP DATABASE succeeds') or diag $drop_err;

$node->safe_psql('postgres', "CREATE DATABASE rdb OID = $oid");
$node->safe_psql('rdb', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('s', start => 1000000, block_size => 10);
});
is(seq_next('rdb', 's', 3), '1000000,1000001,1000002',
    'rdb recreated with the same OID: seq_next() starts at the new start, not in the refilled block of the dropped database');

# 2. The only cache entry changes hands while a refill is in flight.
setup_db('da', 'a', 1);
setup_db('db', 'b', 1000000);
is(seq_next('da', 'a', 1), '1', 'da: the first block of "a" is served');
my $hold_a = hold('da');
is(seq_next('da', 'a', 1), '2', 'da: the call that asks for a refill of "a" returns at once');
ok(allocator_in('da', 'commit'), 'da: the refill of "a" is held in the allocator\'s commit');

# "b" of database db takes the entry over, and asks for a refill in turn,
# which its allocator takes and is held with too
is(seq_next('db', 'b', 1), '1000000', 'db: "b" takes the only cache entry over');
my $hold_b = hold('db');
is(seq_next('db', 'b', 1), '1000001', 'db: the call that asks for a refill of "b" returns at once');
ok(allocator_in('db', 'commit'), 'db: the refill of "b" is held in the allocator\'s commit');

# The refill of "a" arrives first, into the entry that is now "b"'s and
# waits for a refill; then "b"'s own.
$hold_a->quit;
ok(allocator_in('da', 'idle'), 'da: the allocator has handed out the refill of "a"');
$hold_b->quit;
ok(allocator_in('db', 'idle'), 'db: the allocator has handed out the refill of "b"');

my @ids = split /,/, seq_next('db', 'b', 15);
is(scalar(grep { $_ < 1000000 } @ids), 0,
    'db: seq_next() of "b" serves no ID of the stale refill of "a" (' . join(',', @ids) . ')');
is(join(',', @ids), join(',', 1000002 .. 1000016),
    'db: "b" goes on with its current block, then its own refill');

$node->stop;
done_testing();
