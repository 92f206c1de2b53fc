# Guarantee: a copy of a standby is a copy too.  A standby's state file
# names its primary as the origin, so a pg_basebackup clone of the standby
# started as a primary, or the standby restarted without standby.signal
# (which cannot be told from such a copy), must neither serve block
# sequences nor issue snowflake IDs with the standby's worker id until it is
# taken over; and the skip of block sequences after a take-over must not be
# skipped because another server's key, replayed from WAL, looks the same.
# Found by review: on 0.2.0 and on the first fix, the clone issued all
# 200,000 of the promoted standby's IDs again, and the standby restarted
# without its signal file handed out the 100,000 values of its primary's
# last 100 blocks again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

######## a clone of a standby, started as a primary
my $p = uidgen_node('p', init => { allows_streaming => 1 }, 'uidgen.worker_id' => 10);
$p->safe_psql('postgres', q{SELECT seq_create('tab', block_size => 1000)});
$p->backup('bk_s');
my $s = PostgreSQL::Test::Cluster->new('s');
$s->init_from_backup($p, 'bk_s', has_streaming => 1);
$s->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$s->start;
$p->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 1000)');
$p->wait_for_catchup($s);

$s->backup('bk_c');
my $c = PostgreSQL::Test::Cluster->new('c');
$c->init_from_backup($s, 'bk_c');
unlink($c->data_dir . '/standby.signal');
$c->start;
$c->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
my $st = uidgen_status($c);
is($st->{state}, 'copy', 'a clone of a standby with the standby\'s worker id is a copy');
is($st->{copy_reason}, 'base backup', 'found by its backup label');
is($st->{block_sequences_fenced}, 't', 'its block sequences are fenced');
like(psql_error($c, 'SELECT snowflake_next()'),
	qr/ERROR:\s+55000: uidgen.worker_id 1 is the worker id of the server this data directory was copied from/,
	'it refuses snowflake IDs, naming the standby\'s worker id');
like(psql_error($c, q{SELECT seq_reserve_block('tab')}), qr/ERROR:\s+55000:/,
	'and block sequences');

# the standby is promoted; both generate: the clone refuses throughout
$p->stop('immediate');
$s->promote;
$s->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
my $ids = $s->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 200000)');
my ($rc, $out, $err) = $c->psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 200000)');
isnt($rc, 0, 'while the promoted standby issues 200,000 IDs, the clone issues none');
$c->stop;

######## a standby restarted without standby.signal, after its primary's lag
my $o = uidgen_node('o', init => { allows_streaming => 1 });
$o->safe_psql('postgres', q{SELECT seq_create('tab', block_size => 1000)});
$o->backup('bk_q');
my $q = PostgreSQL::Test::Cluster->new('q');
$q->init_from_backup($o, 'bk_q', has_streaming => 1);
$q->append_conf('postgresql.conf', "uidgen.worker_id = 1\n");
$q->start;
$o->wait_for_catchup($q);
$q->backup('bk_r');
my $r = PostgreSQL::Test::Cluster->new('r');
$r->init_from_backup($q, 'bk_r', has_streaming => 1);
$r->append_conf('postgresql.conf', "uidgen.worker_id = 2\n");
$r->start;
$q->wait_for_catchup($r, 'replay', $q->lsn('replay'));

# q is promoted (timeline 2, its skip recorded), r follows it
$o->stop('immediate');
$q->promote;
$q->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
seq_blocks($q, 'postgres', 'tab', 1);
$q->wait_for_catchup($r);
# the lag: r stopped, q hands out 100 blocks and is gone
$r->stop;
my @lag = @{ seq_blocks($q, 'postgres', 'tab', 100) };
$q->stop('immediate');

unlink($r->data_dir . '/standby.signal') or die "unlink: $!";
$r->start;
$r->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
$st = uidgen_status($r);
is($st->{copy_reason}, 'data directory',
	'a standby restarted without standby.signal is taken for a copy of it');
is($st->{block_sequences_fenced}, 't', 'its block sequences are fenced');
like(psql_error($r, q{SELECT seq_reserve_block('tab')}),
	qr/ERROR:\s+55000: uidgen.worker_id 2 is the worker id of the server this data directory was copied from/,
	'seq_reserve_block() refuses: the standby\'s own worker id is an origin\'s');
$r->safe_psql('postgres', 'SELECT uidgen_take_over()');
my @after = @{ seq_blocks($r, 'postgres', 'tab', 100) };
is(range_overlap(\@lag, \@after), 0,
	'after the take-over, none of the 100,000 values of the lag is handed out again');
is(count_in_log($r, qr/skipped every block sequence of database "postgres" ahead by 1000000 values after the timeline changed from 2 to 2 \(taken over, [0-9a-f]{8}\)/),
	1, 'the skip is logged with the take-over\'s key');

done_testing();
