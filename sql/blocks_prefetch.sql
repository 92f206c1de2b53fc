-- Block prefetch: seq_reserve_block() and seq_next() of strategy 'table'
-- carve from ranges the allocator committed ahead (id_sequences_prefetch
-- shows where), exact exhaustion, and the IDs given back on a change.

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- Consecutive blocks, carved from one range: the row holds its end
SELECT seq_create('pf', block_size => 100);
SELECT * FROM seq_reserve_block('pf', 1000);
SELECT * FROM seq_reserve_block('pf', 1000);
SELECT * FROM seq_reserve_block('pf');
SELECT seq_next('pf');
-- what is handed out and what is held ahead add up to the row's end
SELECT name, strategy, next_id, next_block_start >= next_id AS ahead_ok,
       next_id + reserved_ahead = next_block_start AS adds_up
  FROM id_sequences_prefetch WHERE name = 'pf';

-- seq_advance() gives the prefetched IDs back first: its answer is exact
SELECT seq_advance('pf', 100);
SELECT next_block_start FROM id_sequences WHERE name = 'pf';
SELECT reserved_ahead FROM id_sequences_prefetch WHERE name = 'pf';
SELECT * FROM seq_reserve_block('pf', 5);
-- and so does seq_alter(): max_value may go down to the last ID handed out
SELECT seq_alter('pf', max_value => 2106);
SELECT next_block_start FROM id_sequences WHERE name = 'pf';
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('pf', 1)$$);
SELECT next_block_start, exhausted FROM id_sequences WHERE name = 'pf';

-- Exact exhaustion: a request that fits below max_value is served even
-- where the range prefetched for it ends short; one that does not gets 2200H
SELECT seq_create('pfx', block_size => 1000, max_value => 2500);
SELECT * FROM seq_reserve_block('pfx');
SELECT * FROM seq_reserve_block('pfx', 1000);
-- (the range prefetched for it was cut at max_value: 2001..2500)
SELECT * FROM seq_reserve_block('pfx', 400);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('pfx', 101)$$);
-- sticky, as before: after a 2200H nothing more is served...
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('pfx', 1)$$);
SELECT exhausted FROM id_sequences WHERE name = 'pfx';
-- ...until max_value is raised, which gives the 100 IDs left back
SELECT seq_alter('pfx', max_value => 2600);
SELECT * FROM seq_reserve_block('pfx', 200);
SELECT pg_temp.err($$SELECT seq_next('pfx')$$);
-- seq_next() too ends exactly at max_value
SELECT seq_create('pfn', block_size => 7, max_value => 10);
SELECT array_agg(seq_next('pfn')) FROM generate_series(1, 10);
SELECT pg_temp.err($$SELECT seq_next('pfn')$$);

-- Strategy 'sequence' is not prefetched: whole blocks from its native
-- sequence, as before
SELECT seq_create('pfs', block_size => 10, strategy => 'sequence');
SELECT * FROM seq_reserve_block('pfs');
SELECT * FROM seq_reserve_block('pfs');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('pfs', 5)$$);
SELECT name, strategy, reserved_ahead FROM id_sequences_prefetch WHERE name = 'pfs';

-- Dropped and created again: nothing of the old range is served
SELECT seq_drop('pf');
SELECT seq_create('pf', block_size => 100);
SELECT * FROM seq_reserve_block('pf', 3);

-- seq_unprefetch() is for seq_lock_row() alone
SELECT has_function_privilege('public', 'seq_unprefetch(text, bigint)', 'EXECUTE');
SELECT has_function_privilege('public', 'seq_prefetched()', 'EXECUTE');

-- seq_advance() of strategy 'sequence' frees the seq_next() cache too: no
-- ID at or below "past" is served after it (review: the cached block went
-- on serving 2..100 after seq_advance(name, 50) had answered 101)
SELECT seq_create('pfa', block_size => 100, strategy => 'sequence');
SELECT seq_next('pfa');
SELECT seq_advance('pfa', 50);
SELECT seq_next('pfa') > 50 AS above_past;

SELECT seq_drop(name) FROM id_sequences WHERE name IN ('pf', 'pfx', 'pfn', 'pfs', 'pfa');
