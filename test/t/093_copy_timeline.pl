# Guarantee: a data directory on another timeline than the one its state
# file vouches for, started with no signal file and no backup label (so
# nothing at start-up tells it is a copy), is a copy: the keeper finds the
# timeline (copy reason "timeline"), and the server refuses snowflake_next()
# (55000, "copied from", the timeline sentence as detail) with its own
# worker id as its origin's and fences its block sequences, durably (after
# a restart still), until uidgen_take_over().
#
# The state file of a server on timeline 1 is kept aside; the server is
# then restored in place (recovery.signal, a restore_command that finds
# nothing), which ends on timeline 2, and taken over there.  Stopped, the
# timeline 1 state file put back: the directory's inode and system
# identifier are those the file vouches for; only the timeline differs.
use strict;
use warnings;
use File::Copy;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('tl', 'uidgen.worker_id' => 3,
	init => { allows_streaming => 1 });
$node->safe_psql('postgres', q{
	SELECT seq_create('blocks', block_size => 10);
	SELECT seq_reserve_block('blocks', 10);
	SELECT count(snowflake_next()) FROM generate_series(1, 1000);
});
# (the keeper takes up the timeline, and saves it, shortly after start-up)
for (my $i = 0; read_state_file($node)->{timeline} != 1; $i++)
{
	die 'the state file does not vouch for timeline 1' if $i > 600;
	usleep(100_000);
}
my $state = $node->data_dir . '/uidgen.state';
my $kept = $node->basedir . '/uidgen.state.tl1';
$node->stop;
copy($state, $kept) or die "copy: $!";

# Restored in place: timeline 2, a copy (recovery), taken over.
$node->append_conf('postgresql.conf', "restore_command = 'false'\n");
$node->set_recovery_mode;
$node->start;
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'recovery did not end';
my $st = uidgen_status($node);
is($st->{copy_reason}, 'recovery', 'restored in place: a copy (recovery)');
$node->safe_psql('postgres', 'SELECT uidgen_take_over()');
$st = uidgen_status($node);
is($st->{state}, 'ok', 'taken over: state ok');
is($st->{timeline}, '2', 'taken over: on timeline 2');
$node->stop;

# The timeline 1 state file back: nothing at start-up says copy.
copy($kept, $state) or die "copy: $!";
my $offset = -s $node->logfile;
$node->start;
ok( $node->poll_query_until(
		'postgres', 'SELECT copy_reason FROM uidgen_status()', 'timeline'),
	'the keeper finds the timeline: copy reason timeline');
is(count_in_log($node, qr/uidgen found that this data directory is a copy/, $offset),
	1, 'logged once: a copy');

# Refused and fenced, as a copy of worker 3; after a restart too.
for my $when ('found', 'after a restart')
{
	$st = uidgen_status($node);
	is($st->{state}, 'copy', "$when: state copy");
	is($st->{origin_worker_id}, '3', "$when: origin worker id 3 (its own)");
	is($st->{block_sequences_fenced}, 't', "$when: block sequences fenced");
	like(psql_error($node, 'SELECT snowflake_next()'),
		qr/ERROR:\s+55000:[^\n]*copied from.*\nDETAIL:\s+This server runs on another timeline than the one its state file was written on\./s,
		"$when: snowflake_next() refused (55000, copied from, the timeline)");
	like(psql_error($node, q{SELECT seq_reserve_block('blocks', 10)}),
		qr/ERROR:\s+55000: [^\n]*(?:copied data directory are fenced|was copied from)/,
		"$when: seq_reserve_block() refused (55000)");
	$node->restart;
}

# Taken over: generates again, on timeline 2.
$node->safe_psql('postgres', 'SELECT uidgen_take_over()');
$st = uidgen_status($node);
is($st->{state}, 'ok', 'taken over again: state ok');
is($st->{timeline}, '2', 'taken over again: vouches for timeline 2');
is($node->safe_psql('postgres', 'SELECT snowflake_worker(snowflake_next())'),
	'3', 'taken over again: snowflake_next() with worker id 3');

$node->stop;
done_testing();
