# seq_next() from several backends into a primary key: the shared cache and
# its refills never hand an ID out twice, also while seq_reserve_block()
# takes blocks of the same sequence, while the sequence is altered (which
# empties the cache under the callers' feet) and across a restart.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('blocks_seq_next');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'uidgen'
uidgen.block_cache_entries = 4
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION uidgen;
    SELECT seq_create('pk', block_size => 7);
    SELECT seq_create('other1', block_size => 3);
    SELECT seq_create('other2', block_size => 3);
    SELECT seq_create('other3', block_size => 3);
    SELECT seq_create('other4', block_size => 3);
    CREATE TABLE t (id bigint PRIMARY KEY, src text);
    CREATE TABLE o (id bigint, seq text, PRIMARY KEY (seq, id));
});

my %scripts = (
    '104_next@20' => q{INSERT INTO t VALUES (seq_next('pk'), 'next');},
    '104_block@2' => q{INSERT INTO t SELECT g, 'block' FROM seq_reserve_block('pk', 5) r, generate_series(r.first_id, r.last_id) g;},
    '104_alter@1' => q{SELECT seq_alter('pk', block_size => (random() * 20)::int + 1);},
    # more sequences than cache entries: entries are evicted and reused
    '104_evict@2' => q{\set s random(1, 4)
INSERT INTO o VALUES (seq_next('other' || :s), 'other' || :s);},
);

sub run_pgbench
{
    my ($label, $run) = @_;
    # pgbench() refuses to overwrite script files: name them per run
    my %files = map { my $f = $_; $f =~ s/@/_$run@/; ($f => $scripts{$_}) } keys %scripts;
    $node->pgbench('-n -c 8 -j 8 -t 400', 0,
        [qr/number of transactions actually processed: 3200\/3200/],
        [qr/^$/], "pgbench with 8 clients, $label", \%files);
}

run_pgbench('first run', 1);
my $count1 = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
cmp_ok($count1, '>', 1000, "IDs inserted without a primary key violation ($count1)");
is($node->safe_psql('postgres',
    "SELECT count(*) FROM t WHERE src = 'next'") > 0 ? 't' : 'f', 't', 'seq_next() rows present');
is($node->safe_psql('postgres',
    "SELECT max(id) < (SELECT next_block_start FROM id_sequences WHERE name = 'pk') FROM t"),
    't', 'every ID is below next_block_start');

# A restart loses the cached IDs (gaps), never repeats them.
my $max_before = $node->safe_psql('postgres', 'SELECT max(id) FROM t');
$node->restart;
run_pgbench('after a restart', 2);
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id) = count(*) FROM t'), 't', 'still unique');
cmp_ok($node->safe_psql('postgres', "SELECT min(seq_next('pk')) FROM generate_series(1, 3)"),
    '>', $max_before, 'after the restart seq_next() goes on above');

$node->stop;
done_testing();
