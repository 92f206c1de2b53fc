# pg_dump / pg_restore carry id_sequences (a configuration table of the
# extension): after a round trip, into another database or in place of the
# original, the next block of every sequence is above every block handed
# out before, including the ones seq_next() had cached.
#
# Restored in place of the original, the database is recreated with the OID
# of the dropped one, whose shared cache entries (keyed by database OID and
# name) still held blocks of seq_next() and whose allocator was running:
# dropping the database must forget them, so that seq_next() in the restored
# database starts at the restored row's next_block_start instead of going on
# with IDs cached for the dropped database.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('blocks_dump');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'uidgen'");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('orders', block_size => 100);
    SELECT seq_create('small', start => 50, block_size => 7, max_value => 10000);
    SELECT seq_advance('small', 500);
    SELECT seq_create('invoice', start => 41, strategy => 'gapless');
    SELECT seq_next('invoice'), seq_next('invoice');
    SELECT seq_create('formatted', start => 7, max_value => 99999, strategy => 'gapless',
                      format => 'F{YYYY}-{n:5}{check}', time_zone => 'Europe/Berlin');
    SELECT seq_next_text('formatted');
    CREATE TABLE handed (seq text, first_id bigint, last_id bigint);
    INSERT INTO handed SELECT 'orders', r.* FROM generate_series(1, 5) g, LATERAL seq_reserve_block('orders', g * 10) r;
    INSERT INTO handed SELECT 'small', * FROM seq_reserve_block('small');
    INSERT INTO handed SELECT 'orders', id, id FROM (SELECT seq_next('orders') AS id FROM generate_series(1, 30)) s;
});
my $max = $node->safe_psql('src',
    "SELECT string_agg(seq || '=' || m, ',' ORDER BY seq) FROM (SELECT seq, max(last_id) m FROM handed GROUP BY seq) s");
my ($max_orders) = $max =~ /orders=(\d+)/;
my ($max_small) = $max =~ /small=(\d+)/;
my $rows_before = $node->safe_psql('src',
    'SELECT name, next_block_start, block_size, max_value, exhausted FROM id_sequences ORDER BY name');

my $dump = "$PostgreSQL::Test::Utils::tmp_check/blocks_src.dump";
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('src') ], 'pg_dump');

# Into a new database.
$node->safe_psql('postgres', 'CREATE DATABASE dst');
command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('dst'), $dump ],
    'pg_restore into a new database');
is($node->safe_psql('dst',
    'SELECT name, next_block_start, block_size, max_value, exhausted FROM id_sequences ORDER BY name'),
    $rows_before, 'the sequences came across unchanged');
is($node->safe_psql('dst', "SELECT strategy || ' ' || seq_next('invoice') FROM id_sequences WHERE name = 'invoice'"),
    'gapless 43', 'a gapless sequence comes across with its strategy and goes on with the next number');
is($node->safe_psql('dst', "SELECT format || ' ' || time_zone FROM id_sequences WHERE name = 'formatted'"),
    'F{YYYY}-{n:5}{check} Europe/Berlin', 'a formatted sequence comes across with its format and time zone');
is($node->safe_psql('dst', "SELECT seq_format('formatted', 8, '2026-12-31 23:30:00+00')"),
    'F2027-00008P', 'and formats with them (the date in Berlin)');
like($node->safe_psql('dst', "SELECT seq_next_text('formatted')"),
    qr/^F\d{4}-00008[0-9A-Z]$/, 'seq_next_text() goes on with the next number');
cmp_ok($node->safe_psql('dst', "SELECT first_id FROM seq_reserve_block('orders')"),
    '>', $max_orders, 'next block of orders is above every earlier one');
cmp_ok($node->safe_psql('dst', "SELECT seq_next('orders')"),
    '>', $max_orders, 'seq_next() of orders too');
cmp_ok($node->safe_psql('dst', "SELECT first_id FROM seq_reserve_block('small')"),
    '>', $max_small, 'next block of small is above every earlier one');
is($node->safe_psql('dst', "SELECT string_agg(tgname, ' ' ORDER BY tgname) FROM pg_trigger WHERE tgrelid = 'id_sequences'::regclass"),
    'id_sequences_invalidate id_sequences_invalidate_all id_sequences_lease_wait id_sequences_lease_wait_all',
    'the triggers of id_sequences exist once each');

# In place of the original (dropped and restored under the same name and
# OID), so that nothing cached for the old database may leak into the new
# one.  The old database has live cache state: "orders" has IDs left in its
# cached block (30 of 100 served), and its allocator is running.
my $oid = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'src'");
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM pg_stat_activity
    WHERE backend_type = 'uidgen allocator' AND datname = 'src'}),
    '1', 'the database to be dropped has a running allocator');
$node->safe_psql('postgres', 'DROP DATABASE src');
$node->safe_psql('postgres', "CREATE DATABASE src OID = $oid");
is($node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'src'"),
    $oid, 'the database is recreated with the OID of the dropped one');
command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('src'), $dump ],
    'pg_restore in place of the dropped database');
my $restored = $node->safe_psql('src',
    "SELECT next_block_start FROM id_sequences WHERE name = 'orders'");
is($node->safe_psql('src', "SELECT seq_next('orders')"), $restored,
    'the first seq_next() after the restore is the restored next_block_start, not an ID cached for the dropped database');
my $overlaps = $node->safe_psql('src', q{
    WITH fresh AS (
        SELECT 'orders' AS seq, * FROM seq_reserve_block('orders', 3)
        UNION ALL SELECT 'small', * FROM seq_reserve_block('small')
        UNION ALL SELECT 'orders', id, id FROM (SELECT seq_next('orders') AS id FROM generate_series(1, 10)) s)
    SELECT count(*) FROM fresh f JOIN handed h
        ON f.seq = h.seq AND f.first_id <= h.last_id AND h.first_id <= f.last_id});
is($overlaps, '0', 'no block after the restore overlaps one handed out before');

$node->stop;
done_testing();
