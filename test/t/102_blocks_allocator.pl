# The allocator worker: callers recover when it is terminated (even while
# they stream reservations), get a clear timeout error instead of hanging
# when it is stuck, and recover after it is SIGKILLed (crash restart).  Also:
# one allocator per database within uidgen.block_databases, idle allocators
# exit, a database owner's settings do not reach the allocator, its errors
# reach the caller clipped at a character boundary, and the refusals on a
# standby (25006) and without preloading (55000).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;
use lib 'test';
use UidgenTest qw(wait_for_log poll_through_crashes);

my $node = PostgreSQL::Test::Cluster->new('blocks_allocator');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'uidgen'
restart_after_crash = on
uidgen.block_databases = 2
uidgen.allocator_idle_timeout = 2s
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('a', block_size => 10);
    SELECT seq_create('n', block_size => 5);
    CREATE TABLE got (first_id bigint, last_id bigint);
    CREATE TABLE pk (id bigint PRIMARY KEY);
});

sub allocator_pid
{
    my ($db) = @_;
    return $node->safe_psql('postgres',
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'uidgen allocator' AND datname = '$db'");
}

# 1. Terminated between calls: the next call starts a new one.
$node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('a')");
my $pid1 = allocator_pid('postgres');
like($pid1, qr/^\d+$/, 'an allocator serves the database');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid1)");
is($node->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('a')"),
    '11', 'a reservation after the allocator was terminated succeeds');
my $pid2 = allocator_pid('postgres');
isnt($pid2, $pid1, 'a new allocator was started');

# 2. Terminated repeatedly while 4 clients stream reservations and seq_next()
# into tables: no client sees an error, no ID is handed out twice.
my ($pgb_out, $pgb_err) = ('', '');
my $h = IPC::Run::start(
    [ 'pgbench', '-n', '-c', '4', '-j', '4', '-T', '6', '-M', 'prepared',
      '-f', write_script('102_reserve.sql', q{INSERT INTO got SELECT * FROM seq_reserve_block('a');}),
      '-f', write_script('102_next.sql', q{INSERT INTO pk VALUES (seq_next('n'));}),
      $node->connstr('postgres') ],
    '>', \$pgb_out, '2>', \$pgb_err);
my $kills = 0;
for my $i (1 .. 8)
{
    usleep(500_000);    # (paced: the terminations spread over the clients' run)
    my $pid = allocator_pid('postgres');
    # (the shared cache serves the clients mostly without the allocator, so
    # on a loaded machine it may not be running: a reservation larger than
    # the cache holds starts one)
    $pid = do { $node->safe_psql('postgres', "SELECT count(*) FROM seq_reserve_block('a', 5000000)"); allocator_pid('postgres') }
      unless $pid =~ /^\d+$/;
    next unless $pid =~ /^\d+$/;
    $node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
    $kills++;
}
my $ok = $h->finish;
is($ok ? 0 : $h->result, 0, 'pgbench clients saw no error while the allocator was terminated');
unlike($pgb_err, qr/ERROR|aborted/, 'no client error');
cmp_ok($kills, '>=', 4, "allocator terminated $kills times under load");
like($pgb_out, qr/number of transactions actually processed: [1-9]/, 'clients made progress');
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM (
        SELECT first_id, max(last_id) OVER (ORDER BY first_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
        FROM got) AS g
    WHERE first_id <= reached}),
    '0', 'no reservation overlaps another');
is($node->safe_psql('postgres',
    "SELECT count(*) = count(DISTINCT id) FROM pk"), 't', 'seq_next() values unique');

# 3. Stuck (SIGSTOP): a caller gets the timeout error, 55P03, not a hang.
# (an allocator terminated last in 2. is not replaced while the shared
# cache serves: ask for more than it holds, which needs a refill)
my $stuck = allocator_pid('postgres');
$stuck = do { $node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('a', 5000000)"); allocator_pid('postgres') }
  unless $stuck =~ /^\d+$/;
kill 'STOP', $stuck;
my $t0 = time();
# (more IDs than the shared cache holds ahead: the allocator must act)
my ($ret, $out, $err) = $node->psql('postgres',
    "SET uidgen.block_timeout = '1s'; \\set VERBOSITY verbose\nSELECT * FROM seq_reserve_block('a', 1000000000);");
my $elapsed = time() - $t0;
kill 'CONT', $stuck;
isnt($ret, 0, 'a call to a stuck allocator fails');
like($err, qr/55P03: timed out waiting for the uidgen allocator to reserve IDs from block sequence "a"/,
    'with the timeout error');
cmp_ok($elapsed, '<', 10, 'after about uidgen.block_timeout');
like($node->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('a')"),
    qr/^\d+$/, 'the allocator serves again once resumed');

# 4. SIGKILL: crash restart; afterwards callers work and go on above.
my $before = $node->safe_psql('postgres', 'SELECT max(last_id) FROM got');
my $offset = -s $node->logfile;
kill 'KILL', allocator_pid('postgres');
# (the restart itself, not a session that ran before it)
wait_for_log($node, qr/all server processes terminated; reinitializing/, $offset)
  or die 'no crash restart after the allocator was killed';
poll_through_crashes($node, 'SELECT true') or die 'server did not restart';
cmp_ok($node->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('a')"),
    '>', $before, 'after a crash restart reservations go on above');
cmp_ok($node->safe_psql('postgres', "SELECT seq_next('n')"),
    '>', $node->safe_psql('postgres', 'SELECT max(id) FROM pk'),
    'and seq_next() too');

# 5. Database slots: two databases at a time, a third waits for an idle
# allocator to exit (uidgen.allocator_idle_timeout).
for my $db ('db1', 'db2', 'db3')
{
    $node->safe_psql('postgres', "CREATE DATABASE $db");
    $node->safe_psql($db, "CREATE EXTENSION uidgen; SELECT seq_create('s');");
}
$node->safe_psql('db1', "SELECT * FROM seq_reserve_block('s')");
$node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('a')");
($ret, $out, $err) = $node->psql('db2', "\\set VERBOSITY verbose\nSELECT * FROM seq_reserve_block('s')");
like($err, qr/53400: too many databases are using block sequences/,
    'a third database is refused while two allocators are busy');
$node->poll_query_until('postgres',
    "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'")
  or die 'idle allocators did not exit';
pass('idle allocators exit');
is($node->safe_psql('db3', "SELECT first_id FROM seq_reserve_block('s')"), '1',
    'a freed slot serves another database');
# DROP DATABASE makes the database's allocator leave
is($node->safe_psql('postgres', 'DROP DATABASE db3; SELECT 1'), '1',
    'a database with an allocator can be dropped');

# 6. A database owner's settings for the database do not reach the
# allocator, which runs as the bootstrap superuser: neither a role nor a
# session authorization nor exit_on_error (every error, even a retried
# serialization failure, would end the allocator), nor a multibyte error
# message longer than the allocator passes on (160 bytes) split in the
# middle of a character.
$node->safe_psql('postgres', q{
    CREATE ROLE alice LOGIN;
    CREATE DATABASE owned OWNER alice ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0});
$node->safe_psql('owned', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('s', block_size => 10);
    CREATE TABLE who (cu name, su name);
    CREATE FUNCTION note_who() RETURNS trigger LANGUAGE plpgsql
        AS $$BEGIN INSERT INTO public.who VALUES (current_user, session_user); RETURN NEW; END$$;
    CREATE TRIGGER note_who AFTER UPDATE ON id_sequences FOR EACH ROW EXECUTE FUNCTION note_who();});
for my $set ("role = 'alice'", "session_authorization = 'alice'", 'exit_on_error = on')
{
    ($ret, $out, $err) = $node->psql('owned', "SET ROLE alice; ALTER DATABASE owned SET $set;");
    is($ret, 0, "the owner may set $set for the database") or diag($err);
}
($ret, $out, $err) = $node->psql('owned', "SELECT first_id, last_id FROM seq_reserve_block('s')",
    extra_params => [ '-U', 'alice' ]);
is($out, '1|10', "the owner's settings do not stop reservations") or diag($err);
$node->safe_psql('owned', 'ALTER DATABASE owned RESET role; ALTER DATABASE owned RESET session_authorization');
is($node->safe_psql('owned', 'SELECT DISTINCT cu, su FROM who'), 'postgres|postgres',
    'the allocator ran as the bootstrap superuser, current and session user');
# (the IDs prefetched go back to the row: the next call needs the allocator)
$node->safe_psql('owned', q{SELECT seq_advance('s', 0)});
$node->safe_psql('owned', q{
    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql
        AS $$BEGIN RAISE EXCEPTION '%', repeat(U&'\00E9', 100); END$$;
    CREATE TRIGGER refuse BEFORE UPDATE ON id_sequences FOR EACH ROW EXECUTE FUNCTION refuse();});
# (exit_on_error still set: the allocator must report the error, not die of it)
($ret, $out, $err) = $node->psql('owned', "SELECT * FROM seq_reserve_block('s')");
my $bytes = $err;
ok(utf8::decode($bytes), "the allocator's clipped error message is valid UTF-8") or diag($err);
like($bytes, qr/could not reserve IDs from block sequence "s": \x{e9}{79}$/m,
    'and holds as many whole characters as fit');
$node->safe_psql('owned', 'DROP TRIGGER refuse ON id_sequences; ALTER DATABASE owned RESET ALL');

# 7. On a hot standby: 25006.
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('blocks_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
($ret, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\nSELECT * FROM seq_reserve_block('a', 1)");
like($err, qr/25006: cannot execute seq_reserve_block\(\) during recovery/,
    'seq_reserve_block() on a standby: 25006');
($ret, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\nSELECT seq_next('n')");
like($err, qr/25006: cannot execute seq_next\(\) during recovery/, 'seq_next() on a standby: 25006');
$standby->stop;

# 8. Not preloaded: the library loads harmlessly, the C functions refuse
# with 55000 and a hint (the backend survives), and the administration
# functions, plain SQL, still work.
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$node->restart;
for my $call ("SELECT * FROM seq_reserve_block('a', 1)", "SELECT * FROM seq_reserve_block('a')",
    "SELECT seq_next('a')")
{
    ($ret, $out, $err) = $node->psql('postgres',
        "\\set VERBOSITY verbose\n$call;\nSELECT 'alive';", on_error_stop => 0);
    like($err, qr/55000: uidgen must be loaded via "shared_preload_libraries"/,
        "$call without preloading: 55000");
    like($err, qr/HINT:\s+Add uidgen to the "shared_preload_libraries" setting in postgresql\.conf and restart the server\./,
        "$call without preloading: with the hint");
    unlike($err, qr/FATAL|server closed the connection/, "$call without preloading: no FATAL");
    is($out, 'alive', "$call without preloading: no value, and the backend survives");
}
# (far above what section 2's clients reach: over 1,100,000 once, in 6 s)
is($node->safe_psql('postgres', "SELECT seq_advance('a', 1000000000000)"), '1000000000001',
    'administration works without preloading');
is($node->safe_psql('postgres', "SELECT next_block_start FROM id_sequences WHERE name = 'a'"),
    '1000000000001', 'and is recorded');
$node->stop;
done_testing();

# Write a pgbench script into the test's directory; returns its path.
sub write_script
{
    my ($name, $text) = @_;
    my $path = "$PostgreSQL::Test::Utils::tmp_check/$name";
    unlink $path;
    PostgreSQL::Test::Utils::append_to_file($path, "$text\n");
    return $path;
}
