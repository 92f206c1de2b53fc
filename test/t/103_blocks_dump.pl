# pg_dump / pg_restore carry id_sequences (a configuration table of the
# extension): after a round trip, into another database or in place of the
# original, the next block of every sequence is above every block handed
# out before, including the ones seq_next() had cached.
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
cmp_ok($node->safe_psql('dst', "SELECT first_id FROM seq_reserve_block('orders')"),
    '>', $max_orders, 'next block of orders is above every earlier one');
cmp_ok($node->safe_psql('dst', "SELECT seq_next('orders')"),
    '>', $max_orders, 'seq_next() of orders too');
cmp_ok($node->safe_psql('dst', "SELECT first_id FROM seq_reserve_block('small')"),
    '>', $max_small, 'next block of small is above every earlier one');
is($node->safe_psql('dst', "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'id_sequences'::regclass"),
    '2', 'the invalidation triggers exist once');

# In place of the original (dropped and restored under the same name), so
# that nothing cached for the old database may leak into the new one.
$node->safe_psql('postgres', 'DROP DATABASE src');
$node->safe_psql('postgres', 'CREATE DATABASE src');
command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('src'), $dump ],
    'pg_restore in place of the dropped database');
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
