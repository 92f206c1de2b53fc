# The allocator's queue while a round is held (crash point
# "alloc-before-commit" with crash_action wait, src/core/crashpoint.c):
#  - a backend whose request the held round took sees, at its checks once
#    a second, that the allocator is alive: it does not post it again;
#  - it gives up (statement_timeout) and withdraws the request: the round's
#    range for it is a gap, and the answer does not go to the request it
#    posts next (for another sequence), which the next round serves;
#  - requests posted meanwhile are served together in the next round, one
#    group per sequence (allocsql.c, allocworker.c): one of a 'sequence'
#    sequence for another size than its block fails (22023) while the one
#    beside it gets the next block; no ID is handed out twice;
#  - a request of another database, pending while this database's allocator
#    takes its requests, is left to that database's allocator;
#  - an allocator about to retire when a request comes serves it first.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('alloc_batch', 'uidgen.block_timeout' => '1min');
$node->safe_psql('postgres', q{
	SELECT seq_create('bat', block_size => 10, strategy => 'sequence');
	SELECT seq_create('oth', start => 1000, block_size => 10, strategy => 'sequence');
});
# (the allocator is up before the point is armed, and reloads at the top
# of its loop, before it collects a request: once new sessions see the
# point the postmaster has sent it its SIGHUP, so no wait for it)
is($node->safe_psql('postgres', q{SELECT first_id || '|' || last_id FROM seq_reserve_block('bat')}),
	'1|10', 'first block of "bat"');

my $offset = -s $node->logfile;
arm_crash_point($node, 'alloc-before-commit', 'wait');
$node->poll_query_until('postgres', q{SELECT current_setting('uidgen.crash_point') = 'alloc-before-commit'})
  or die 'the crash point was not armed';
# The held round takes this request; the session withdraws it after 2.5 s
# and then asks for a block of another sequence.
my $holder = start_clients($node, q{
SET log_min_messages = debug1;
SET statement_timeout = '2500ms';
SELECT first_id || '|' || last_id FROM seq_reserve_block('bat');
RESET statement_timeout;
SELECT first_id || '|' || last_id FROM seq_reserve_block('oth');
});
ok(wait_for_log($node, qr/uidgen crash point "alloc-before-commit" reached/, $offset),
	'the allocator holds a round');
# Two requests for "bat" posted while the round is held.
my $waiters = start_clients($node,
	q{SELECT first_id || '|' || last_id FROM seq_reserve_block('bat');},
	q{SELECT first_id || '|' || last_id FROM seq_reserve_block('bat', 5);});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 3 FROM pg_stat_activity WHERE backend_type = 'client backend' AND wait_event IN ('Extension', 'UidgenBlockRequest')}),
	'three sessions wait for the allocator');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE query LIKE '%seq_reserve_block(''oth'')%' AND backend_type = 'client backend' AND wait_event IN ('Extension', 'UidgenBlockRequest')}),
	'the first session gave up and asks for "oth"');
append_to_file($node->data_dir . '/uidgen.crash_release', '');
stop_clients($holder);
stop_clients($waiters);
is(count_in_log($node, qr/uidgen crash point "alloc-before-commit" reached/, $offset), 2,
	'the requests posted during the held round were served together in the next');
disarm_crash_point($node);

like(client_errors($holder), qr/canceling statement due to statement timeout/,
	'the session whose request the held round took timed out');
is(count_in_log($node, qr/allocator exited while serving a request/, $offset), 0,
	'its checks found the allocator alive: the request was not posted again');
is(join(',', client_lines($holder)), '1000|1009',
	'its next request got a block of "oth", not the withdrawn answer');
is(join(',', client_lines($waiters)), '21|30',
	'a request of the next round got the block after the gap (11..20, withdrawn)');
like(client_errors($waiters), qr/strategy "sequence" hands out whole blocks of 10 IDs only/,
	'the other request of that round, for 5 IDs, failed');
is($node->safe_psql('postgres', q{SELECT first_id || '|' || last_id FROM seq_reserve_block('bat')}),
	'31|40', 'the next block follows');

# A request of another database pending while this database's allocator
# takes its own: left to that database's allocator (allocqueue.c), which
# serves it from its own id_sequences.
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', q{CREATE EXTENSION uidgen;
	SELECT seq_create('bat', start => 5000, block_size => 10, strategy => 'sequence');});
unlink($node->data_dir . '/uidgen.crash_release');
$offset = -s $node->logfile;
arm_crash_point($node, 'alloc-before-commit', 'wait');
$node->poll_query_until('postgres', q{SELECT current_setting('uidgen.crash_point') = 'alloc-before-commit'})
  or die 'the crash point was not armed';
my $reserve = q{SELECT first_id || '|' || last_id FROM seq_reserve_block('bat');};
my $other1 = start_clients($node, "\\c other\n$reserve\n");
ok(wait_for_log($node, qr/uidgen crash point "alloc-before-commit" reached/, $offset),
	'the allocator of database "other" holds a round');
my $other2 = start_clients($node, "\\c other\n$reserve\n");
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM pg_stat_activity WHERE datname = 'other' AND backend_type = 'client backend' AND wait_event IN ('Extension', 'UidgenBlockRequest')}),
	'a second request of "other" is pending');
my $here = start_clients($node, "$reserve\n");
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 3 FROM pg_stat_activity WHERE backend_type = 'client backend' AND wait_event IN ('Extension', 'UidgenBlockRequest')}),
	'a request of "postgres" waits too');
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
Time::HiRes::usleep(100_000)
  while count_in_log($node, qr/uidgen crash point "alloc-before-commit" reached/, $offset) < 2
  && time() < $deadline;
append_to_file($node->data_dir . '/uidgen.crash_release', '');
stop_clients($_) for ($other1, $other2, $here);
disarm_crash_point($node);
is(join(',', client_lines($other1), client_lines($other2)), '5000|5009,5010|5019',
	'both requests of "other" were served from its own table');
is(join(',', client_lines($here)), '41|50', 'the request of "postgres" from its own');

# The allocator, idle past uidgen.allocator_idle_timeout, about to retire
# (crash point "alloc-before-retire") when a request comes: it does not
# retire but serves it, and retires later (it reaches the point again).
$node->append_conf('postgresql.conf', "uidgen.allocator_idle_timeout = 1\n");
unlink($node->data_dir . '/uidgen.crash_release');
$offset = -s $node->logfile;
arm_crash_point($node, 'alloc-before-retire', 'wait');
my $allocator = $node->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity
	WHERE backend_type = 'uidgen allocator' AND datname = 'postgres'});
like($allocator, qr/^\d+$/, 'the allocator of "postgres" runs');
my $retire = qr/\[$allocator\] LOG:  uidgen crash point "alloc-before-retire" reached/;
ok(wait_for_log($node, $retire, $offset), 'it is about to retire');
my $late = start_clients($node, "$reserve\n");
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'client backend' AND wait_event IN ('Extension', 'UidgenBlockRequest')}),
	'a request is posted meanwhile');
append_to_file($node->data_dir . '/uidgen.crash_release', '');
stop_clients($late);
is(join(',', client_lines($late)), '51|60', 'the request is served');
$deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
Time::HiRes::usleep(100_000)
  while count_in_log($node, $retire, $offset) < 2 && time() < $deadline;
is(count_in_log($node, $retire, $offset), 2,
	'by the allocator that was about to retire, which came to retire again');
disarm_crash_point($node);

$node->stop;
done_testing();
