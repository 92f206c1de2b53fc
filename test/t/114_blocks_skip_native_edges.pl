# Guarantee: the skip of block sequences on a new timeline
# (blocks/failover.c), for strategy 'sequence', at the edges of its native
# sequence: it moves ahead from where the native sequence's next nextval()
# starts, never backwards and never past max_value + 1:
# - a native sequence never called (is_called false) skips from its
#   last_value, not one increment beyond it;
# - one whose skip would pass max_value stops at max_value + 1, exhausted
#   (2200H), without overflow;
# - one already moved beyond max_value (by hand) is left where it is, not
#   moved back down to max_value + 1;
# - one at the last bigint (last_value + increment overflows, set by hand:
#   IDs stop below 2^63 - 1) leaves its row exhausted (2200H);
# - one whose own MAXVALUE (lowered by hand) is below the skip's target
#   stops at that MAXVALUE, not past it, and is not marked exhausted.
# With a step and counting down (increment, native increment block_size *
# increment): the skip is skip times the increment, in the row's direction,
# on the lattice; it stops at the position after the last ID (max_value or
# min_value), exhausted; a native sequence never called skips from its
# last_value downwards; one at the first bigint (set by hand) leaves its
# row exhausted at -2^63; one moved below min_value by hand is not moved
# back up.
# A sequence of strategy 'table' whose cached range (from before the skip)
# is not used up: the refill after the skip is kept as a spare range, and
# seq_advance() gives back only the spare, which ends at the row's
# next_block_start, not the rest of the range below the skip (the row
# would move back below the skipped values).
# A database whose objects are 0.2.0's (no column increment) skips its
# sequences of strategy 'sequence' by one per ID.
# An empty id_sequences_timeline (no timeline recorded) counts as a change:
# the next allocator skips again, logs the change from "unknown", and
# records the timeline.  A refill of the shared cache is never larger than
# 2^22 IDs, whatever uidgen.promotion_skip (blocks/blockcache.c).
# The timeline change is made by hand: the recorded timeline is changed in
# id_sequences_timeline and the allocator restarted, which then skips as
# after a promotion (test/t/108_blocks_promotion_skip.pl promotes).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $skip = 1000;
my $node = uidgen_node('skip_edges', 'uidgen.promotion_skip' => $skip);
$node->safe_psql('postgres', q{
	SELECT seq_create('fresh', block_size => 10, strategy => 'sequence');
	SELECT seq_create('small', block_size => 10, max_value => 500, strategy => 'sequence');
	SELECT seq_create('beyond', block_size => 10, max_value => 500, strategy => 'sequence');
	SELECT seq_create('top', block_size => 10, strategy => 'sequence');
	SELECT seq_create('lowmax', block_size => 10, strategy => 'sequence');
	SELECT seq_create('tab', block_size => 100);
	SELECT seq_create('step', block_size => 10, increment => 10, strategy => 'sequence');
	SELECT seq_create('stepsmall', block_size => 10, increment => 7, max_value => 5000,
					  strategy => 'sequence');
	SELECT seq_create('down', start => 100000, block_size => 10, increment => -3,
					  strategy => 'sequence');
	SELECT seq_create('downsmall', start => 1000, block_size => 10, increment => -2,
					  min_value => 0, strategy => 'sequence');
	SELECT seq_create('freshdown', start => 50, block_size => 10, increment => -5,
					  strategy => 'sequence');
	SELECT seq_create('bottom', start => -1000, block_size => 10, increment => -1,
					  strategy => 'sequence');
	SELECT seq_create('downbeyond', start => 1000, block_size => 10, increment => -1,
					  min_value => 500, strategy => 'sequence');
});
# (1..100 cached, 1 carved: no refill asked for yet)
is($node->safe_psql('postgres', "SELECT seq_next('tab')"), 1, 'the first ID of "tab"');
# (an allocator round on this timeline first: the skip is recorded for it)
$node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('small')");
$node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('beyond')");
$node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('top')");
$node->safe_psql('postgres', "SELECT * FROM seq_reserve_block('lowmax')");
is($node->safe_psql('postgres', q{
	SELECT string_agg(first_id || '..' || last_id, ' ' ORDER BY n)
	FROM unnest(ARRAY['step', 'stepsmall', 'down', 'downsmall', 'bottom', 'downbeyond'])
		 WITH ORDINALITY AS u(name, n), seq_reserve_block(u.name)}),
	'1..91 1..64 100000..99973 1000..982 -1000..-1009 1000..991',
	'a block of each sequence with a step or counting down, before the skip');
my %native = map { $_ => $node->safe_psql('postgres',
		"SELECT sequence::text FROM id_sequences WHERE name = '$_'") }
  qw(fresh small beyond top lowmax bottom downbeyond);
is($node->safe_psql('postgres', "SELECT is_called FROM $native{fresh}"), 'f',
	'the native sequence of "fresh" was never called');
$node->safe_psql('postgres', "SELECT setval('$native{beyond}', 900, true)");
$node->safe_psql('postgres', "SELECT setval('$native{top}', 9223372036854775807, true)");
$node->safe_psql('postgres', "SELECT setval('$native{bottom}', -9223372036854775808, true)");
$node->safe_psql('postgres', "SELECT setval('$native{downbeyond}', 100, true)");
# (its next nextval() is 11; 11 + skip is above its own MAXVALUE)
$node->safe_psql('postgres', "ALTER SEQUENCE $native{lowmax} MAXVALUE 300");
my $beyond_row = $node->safe_psql('postgres',
	"SELECT next_block_start FROM id_sequences WHERE name = 'beyond'");
my $downbeyond_row = $node->safe_psql('postgres',
	"SELECT next_block_start FROM id_sequences WHERE name = 'downbeyond'");

# The timeline change, by hand; a new allocator compares it.
my $offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	UPDATE id_sequences_timeline SET timeline = 77;
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	WHERE backend_type = 'uidgen allocator'});
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");

is($node->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('fresh')"),
	1 + $skip, 'never called: the skip starts at its last_value (1 + skip)');
like(slurp_file($node->logfile, $offset),
	qr/uidgen skipped every block sequence of database "postgres" ahead by $skip values after the timeline changed from 77 to 1/,
	'the skip is logged, from the recorded timeline to the current one');
like(psql_error($node, "SELECT * FROM seq_reserve_block('small')"),
	qr/ERROR:\s+2200H:\s+block sequence "small" has reached its maximum value/,
	'a skip past max_value: exhausted (2200H)');
is($node->safe_psql('postgres',
		"SELECT next_block_start || ' ' || exhausted FROM id_sequences WHERE name = 'small'"),
	'501 true', 'stopped at max_value + 1, marked exhausted');
is($node->safe_psql('postgres', "SELECT last_value || ' ' || is_called FROM $native{beyond}"),
	'900 true', 'a native sequence already beyond max_value is not moved back');
is($node->safe_psql('postgres',
		"SELECT next_block_start FROM id_sequences WHERE name = 'beyond'"),
	$beyond_row, 'nor is its row');
like(psql_error($node, "SELECT * FROM seq_reserve_block('top')"),
	qr/ERROR:\s+2200H:\s+block sequence "top" has reached its maximum value/,
	'a native sequence at the last bigint (its next position overflows): exhausted (2200H)');
is($node->safe_psql('postgres',
		"SELECT next_block_start || ' ' || exhausted FROM id_sequences WHERE name = 'top'"),
	'9223372036854775807 true', 'its row stops at 2^63 - 1, marked exhausted');
is($node->safe_psql('postgres', "SELECT last_value || ' ' || is_called FROM $native{lowmax}"),
	'300 false', 'a native MAXVALUE below the target: its next nextval() is that MAXVALUE');
is($node->safe_psql('postgres',
		"SELECT next_block_start || ' ' || exhausted FROM id_sequences WHERE name = 'lowmax'"),
	'300 false', 'its row moves with it, not exhausted (max_value is not reached)');
is($node->safe_psql('postgres', 'SELECT timeline FROM id_sequences_timeline'), '1',
	'the current timeline is recorded');

# With a step, and counting down.
is($node->safe_psql('postgres', "SELECT first_id || '..' || last_id FROM seq_reserve_block('step')"),
	(101 + 10 * $skip) . '..' . (191 + 10 * $skip),
	'increment 10: skip times 10 ahead of its next block (101), on its lattice');
is($node->safe_psql('postgres', "SELECT first_id || '..' || last_id FROM seq_reserve_block('down')"),
	(99970 - 3 * $skip) . '..' . (99970 - 3 * $skip - 27),
	'increment -3: skip times 3 below its next block (99970)');
is($node->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('freshdown')"),
	50 - 5 * $skip, 'counting down, never called: the skip starts at its last_value (50)');
like(psql_error($node, "SELECT * FROM seq_reserve_block('stepsmall')"),
	qr/ERROR:\s+2200H:\s+block sequence "stepsmall" has reached its maximum value/,
	'increment 7, a skip past max_value: exhausted (2200H)');
is($node->safe_psql('postgres',
		"SELECT next_block_start || ' ' || exhausted FROM id_sequences WHERE name = 'stepsmall'"),
	'5006 true', 'stopped on its lattice after its last ID (4999 <= max_value 5000), marked exhausted');
like(psql_error($node, "SELECT * FROM seq_reserve_block('downsmall')"),
	qr/ERROR:\s+2200H:\s+block sequence "downsmall" has reached its minimum value/,
	'increment -2, a skip past min_value: exhausted (2200H)');
is($node->safe_psql('postgres',
		"SELECT next_block_start || ' ' || exhausted FROM id_sequences WHERE name = 'downsmall'"),
	'-2 true', 'stopped after its last ID (0, min_value), marked exhausted');
like(psql_error($node, "SELECT * FROM seq_reserve_block('bottom')"),
	qr/ERROR:\s+2200H:\s+block sequence "bottom" has reached its minimum value/,
	'a native sequence at the first bigint (its next position overflows): exhausted (2200H)');
is($node->safe_psql('postgres',
		"SELECT next_block_start || ' ' || exhausted FROM id_sequences WHERE name = 'bottom'"),
	'-9223372036854775808 true', 'its row stops at -2^63, marked exhausted');
is($node->safe_psql('postgres', "SELECT last_value || ' ' || is_called FROM $native{downbeyond}"),
	'100 true', 'a native sequence already below min_value is not moved back up');
is($node->safe_psql('postgres',
		"SELECT next_block_start FROM id_sequences WHERE name = 'downbeyond'"),
	$downbeyond_row, 'nor is its row');

# "tab" skipped too (row at 101 + skip); its cache still holds 2..100.
# Carving past a tenth of it asks for a refill, which starts above the
# skip: kept as the spare range.
is($node->safe_psql('postgres', q{
	SELECT string_agg(seq_next('tab')::text, ',' ORDER BY g) FROM generate_series(2, 12) AS g}),
	'2,3,4,5,6,7,8,9,10,11,12', 'the rest of the range cached before the skip is carved');
$node->poll_query_until('postgres',
	"SELECT reserved_ahead > 88 FROM id_sequences_prefetch WHERE name = 'tab'")
  or die 'no spare range';
is($node->safe_psql('postgres', "SELECT seq_advance('tab', 1)"), 101 + $skip,
	'seq_advance() gives back the spare range only (its first ID, 101 + skip), not the range below the skip');
is($node->safe_psql('postgres', "SELECT seq_next('tab')"), 101 + $skip, 'seq_next() goes on from there');

# No timeline recorded (the row deleted by hand): a change, from "unknown".
$offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	DELETE FROM id_sequences_timeline;
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	WHERE backend_type = 'uidgen allocator'});
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'uidgen allocator'");
is($node->safe_psql('postgres', "SELECT first_id FROM seq_reserve_block('fresh')"),
	1 + 10 + 2 * $skip, 'no timeline recorded: skipped again (its next 1 + skip + 10, plus skip)');
like(slurp_file($node->logfile, $offset),
	qr/uidgen skipped every block sequence of database "postgres" ahead by $skip values after the timeline changed from unknown to 1/,
	'logged as a change from an unknown timeline');
is($node->safe_psql('postgres', 'SELECT count(*) || \' \' || min(timeline) FROM id_sequences_timeline'),
	'1 1', 'one row, the current timeline, is recorded again');

# A database whose objects are still 0.2.0's (no increment, no min_value
# in id_sequences): its sequences of strategy 'sequence' count up by one
# and skip by skip values.
$node->safe_psql('postgres', 'CREATE DATABASE old020');
$node->safe_psql('old020', q{
	CREATE EXTENSION uidgen VERSION '0.2.0';
	SELECT seq_create('nat', block_size => 10, strategy => 'sequence');
	SELECT * FROM seq_reserve_block('nat');
	UPDATE id_sequences_timeline SET timeline = 77;
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	WHERE backend_type = 'uidgen allocator' AND datname = 'old020'});
$node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity
	WHERE backend_type = 'uidgen allocator' AND datname = 'old020'});
is($node->safe_psql('old020', "SELECT first_id || '..' || last_id FROM seq_reserve_block('nat')"),
	(11 + $skip) . '..' . (20 + $skip), "0.2.0's table: skipped by skip values from its next block (11)");

# A refill's size doubles while ranges go fast, at most 2^22 IDs even where
# half of uidgen.promotion_skip is more (at 1000, it is 500).
$node->append_conf('postgresql.conf', 'uidgen.promotion_skip = 20000000');
$node->reload;
$node->safe_psql('postgres', q{
	SELECT seq_create('wide', block_size => 3000000);
	DO $$
	BEGIN
		-- (a range used up within a second: the next one is twice as large)
		FOR i IN 1..10 LOOP
			PERFORM seq_reserve_block('wide');
			EXIT WHEN (SELECT refill_size <> 3000000 FROM id_sequences_prefetch
						WHERE name = 'wide');
		END LOOP;
	END
	$$});
is($node->safe_psql('postgres', "SELECT refill_size FROM id_sequences_prefetch WHERE name = 'wide'"),
	4194304, 'a refill of 2 x 3000000 IDs is capped at 2^22');

$node->stop;
done_testing();
