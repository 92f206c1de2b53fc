# Block prefetch, two review findings (both on the safe side: a gap or a
# wrong refusal, never a repeat), each check failing without its fix:
#
# 1. One statement that draws from a sequence for longer than
#    uidgen.allocator_idle_timeout keeps its cache entry: the allocator's
#    sweep does not free an entry that was carved from since its last
#    sweep (cachetable_release_idle()), although the entry's last_used is
#    the statement's start.  Without that, the entry was freed about once
#    a second: a gap in the IDs and a wait for a refill each time.
# 2. seq_alter() with a refill in flight (committed by the allocator, not
#    yet stored in the cache: held at crash point "alloc-after-commit")
#    gives the in-flight range back too, so it does not count it as handed
#    out: lowering max_value above the IDs really handed out is accepted,
#    and the sequence goes on right after them.
# 3. The same give-back with a step: a sequence with increment 5, and one
#    with increment -5, each with a refill in flight: seq_advance(name, past)
#    with past not beyond the next value returns exactly the next value not
#    handed out, next_block_start equals it, and seq_next() goes on there.
# 4. seq_alter() while the allocator holds a refill it has taken but not
#    yet served (held at crash point "alloc-before-round"): the change of
#    the row makes that refill stale, and the allocator leaves it out
#    instead of committing a range nobody will use, so the sequence goes on
#    right after the IDs handed out, by the new step (issue 36: CI's
#    blocks_step once got -1002, -1102 instead of -2, -102 here).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use lib 'test';
use UidgenTest;

my $node = uidgen_node('prefetch_review',
	'uidgen.allocator_idle_timeout' => '1s',
	log_statement => 'none');

######## 1. a long statement keeps its entry
$node->safe_psql('postgres', q{
	SELECT seq_create('long', block_size => 100);
	CREATE FUNCTION draw_for(secs float8, OUT n bigint, OUT gaps bigint, OUT distinct_ids bigint)
	LANGUAGE plpgsql AS $$
	DECLARE
	    stop timestamptz := clock_timestamp() + secs * interval '1 second';
	    prev bigint;
	    x bigint;
	BEGIN
	    n := 0;
	    gaps := 0;
	    CREATE TEMP TABLE drawn (id bigint);
	    WHILE clock_timestamp() < stop LOOP
	        x := seq_next('long');
	        INSERT INTO drawn VALUES (x);
	        n := n + 1;
	        IF prev IS NOT NULL AND x <> prev + 1 THEN
	            gaps := gaps + 1;
	        END IF;
	        prev := x;
	    END LOOP;
	    SELECT count(DISTINCT id) INTO distinct_ids FROM drawn;
	    DROP TABLE drawn;
	END $$;
});
my ($n, $gaps, $distinct) = split /\|/,
  $node->safe_psql('postgres', 'SELECT * FROM draw_for(4.5)');
note "one statement of 4.5 s drew $n IDs with $gaps gaps";
cmp_ok($n, '>', 100, 'the statement drew IDs throughout');
is($distinct, $n, 'every ID it drew is distinct');
is($gaps, 0, 'a statement drawing for longer than allocator_idle_timeout keeps its entry: no gap');
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM seq_prefetched()}),
	'once the statement is over, its entry is released as idle');

# Disarm "alloc-after-commit" and let the allocator held there go on
# (checked in the log from byte $offset on, as test $what).
sub release_allocator
{
	my ($offset, $what) = @_;
	disarm_crash_point($node);
	append_to_file($node->data_dir . '/uidgen.crash_release', '');
	ok(wait_for_log($node, qr/crash point "alloc-after-commit" released/, $offset), $what);
	unlink $node->data_dir . '/uidgen.crash_release';
	return;
}

######## 2. seq_alter() with a refill in flight
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET uidgen.allocator_idle_timeout = '60s';
	SELECT pg_reload_conf();
	SELECT seq_create('fl', block_size => 100);
});
# the first range: 1..100 (one block)
is($node->safe_psql('postgres', q{SELECT seq_next('fl')}), '1', 'the first ID');
my $offset = -s $node->logfile;
# (no wait for the allocator to reload: set_crash_point() returns once new
# sessions see the point, so the postmaster has already sent the allocator
# its SIGHUP, and the allocator reloads at the top of its loop, before it
# collects the request posted below)
set_crash_point($node, 'alloc-after-commit', 'wait');
# past 10% of the range: the next one is asked for, nobody waits
my @drawn = split /\n/, $node->safe_psql('postgres',
	q{SELECT seq_next('fl') FROM generate_series(1, 20)});
ok(wait_for_log($node, qr/crash point "alloc-after-commit" reached/, $offset),
	'the refill is committed and held before the cache gets it');
my $end = $node->safe_psql('postgres',
	q{SELECT next_block_start FROM id_sequences WHERE name = 'fl'});
cmp_ok($end, '>', 101, "the row's next_block_start ($end) covers the range in flight");
my ($rc, $out, $err) = $node->psql('postgres',
	q{SELECT seq_alter('fl', max_value => 150)});
is($rc, 0, 'seq_alter() lowers max_value above the IDs handed out (21), below the range in flight')
  or diag $err;
is($node->safe_psql('postgres',
	q{SELECT next_block_start FROM id_sequences WHERE name = 'fl'}), '22',
	'the range in flight went back to the row with the rest of the current one');
release_allocator($offset, 'the allocator goes on');
push @drawn, split /\n/, $node->safe_psql('postgres',
	q{SELECT seq_next('fl') FROM generate_series(1, 129)});
is($drawn[20], '22', 'the sequence goes on right after the IDs handed out');
my %seen;
$seen{$_}++ for (1, @drawn);
is(scalar(keys %seen), 150, '150 distinct IDs up to max_value');
my $exhausted = psql_error($node, q{SELECT seq_next('fl')});
like($exhausted, qr/2200H/, 'the 151st gets 2200H');

######## 3. the give-back with a step, a refill in flight
# (seq_advance(name, past) with past on the near side of the next value
# changes nothing but gives back what the cache holds)
for my $case ([ 'st5', 2, 5, 0 ], [ 'stm5', -2, -5, 0 ])
{
	my ($name, $start, $inc, $past) = @$case;
	$node->safe_psql('postgres',
		"SELECT seq_create('$name', start => $start, increment => $inc, block_size => 100)");
	is($node->safe_psql('postgres', "SELECT seq_next('$name')"), $start, "$name: the first value");
	$offset = -s $node->logfile;
	set_crash_point($node, 'alloc-after-commit', 'wait');    # (as in 2.)
	my @got = ($start, split /\n/, $node->safe_psql('postgres',
		"SELECT seq_next('$name') FROM generate_series(1, 20)"));
	is_deeply(\@got, [ map { $start + $_ * $inc } 0 .. 20 ], "$name: 21 values, by $inc");
	ok(wait_for_log($node, qr/crash point "alloc-after-commit" reached/, $offset),
		"$name: the refill is committed and held before the cache gets it");
	my $next = $start + 21 * $inc;
	is($node->safe_psql('postgres', "SELECT seq_advance('$name', $past)"), $next,
		"$name: seq_advance() returns exactly the next value not handed out ($next)");
	is($node->safe_psql('postgres',
		"SELECT next_block_start FROM id_sequences WHERE name = '$name'"), $next,
		"$name: next_block_start is that value (the range in flight given back too)");
	release_allocator($offset, "$name: the allocator goes on");
	is($node->safe_psql('postgres',
		"SELECT string_agg(seq_next('$name')::text, ',') FROM generate_series(1, 3)"),
		join(',', map { $next + $_ * $inc } 0 .. 2), "$name: seq_next() goes on from there");
}

######## 4. seq_alter() with a refill taken, not yet served
$node->safe_psql('postgres',
	q{SELECT seq_create('stale', start => 0, increment => -1, block_size => 10)});
is($node->safe_psql('postgres', q{SELECT seq_next('stale')}), '0', 'stale: the first value');
$offset = -s $node->logfile;
set_crash_point($node, 'alloc-before-round', 'wait');    # (as in 2.)
# the second of 10 is past 10% of the range: the next one is asked for
is($node->safe_psql('postgres', q{SELECT seq_next('stale')}), '-1', 'stale: the second value');
ok(wait_for_log($node, qr/crash point "alloc-before-round" reached/, $offset),
	'stale: the allocator has taken the refill and holds it before its round');
$node->safe_psql('postgres', q{SELECT seq_alter('stale', increment => -100)});
disarm_crash_point($node);
append_to_file($node->data_dir . '/uidgen.crash_release', '');
ok(wait_for_log($node, qr/crash point "alloc-before-round" released/, $offset),
	'stale: the allocator goes on');
unlink $node->data_dir . '/uidgen.crash_release';
is($node->safe_psql('postgres',
	q{SELECT string_agg(seq_next('stale')::text, ',') FROM generate_series(1, 3)}),
	'-2,-102,-202', 'stale: seq_next() goes on right after -1, by the new step (no range lost)');

done_testing();
