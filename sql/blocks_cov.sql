-- Paths of the shared block cache and of strategy 'sequence' that the other
-- tests do not take (blocks/blockcache.c).

-- A spare range: for strategy 'sequence', a seq_reserve_block() (served by
-- the allocator directly, one nextval()) between two refills of the cache
-- leaves a gap, so the next refill is kept as the spare range; seq_next()
-- moves to it once the current range is used up (the rest of the current
-- range is never skipped, the spare's first ID is the next one).
SELECT seq_create('cov_spare', block_size => 10, strategy => 'sequence');
-- the first refill: 1..10, carved from 1
SELECT seq_next('cov_spare');
-- 11..20, not through the cache
SELECT * FROM seq_reserve_block('cov_spare');
-- 2 passes a tenth of the range: the next refill (21..) is asked for
SELECT seq_next('cov_spare');
-- (wait until it is stored: 8 IDs left in the current range, 10 in the spare)
DO $$
BEGIN
    FOR i IN 1..300 LOOP
        EXIT WHEN (SELECT reserved_ahead > 8 FROM id_sequences_prefetch
                    WHERE name = 'cov_spare');
        PERFORM pg_sleep(0.1);
    END LOOP;
END
$$;
SELECT next_id, reserved_ahead FROM id_sequences_prefetch WHERE name = 'cov_spare';
-- the current range to its end: 3..10
SELECT array_agg(seq_next('cov_spare') ORDER BY g) FROM generate_series(1, 8) AS g;
-- what the cache shows next with the current range used up: the spare's first
SELECT next_id, reserved_ahead FROM id_sequences_prefetch WHERE name = 'cov_spare';
-- then the spare: 21, 22
SELECT seq_next('cov_spare'), seq_next('cov_spare');
SELECT seq_drop('cov_spare');

-- Dropping a table named id_sequences that is not uidgen's, and a column of
-- it (blocks.c's object access hook): nothing of uidgen's is dropped or
-- waited for, and the block cached for a sequence is kept (its next ID
-- follows).
SELECT seq_create('cov_keep', block_size => 10);
SELECT seq_next('cov_keep');
CREATE SCHEMA cov_other;
CREATE TABLE cov_other.id_sequences (name text PRIMARY KEY, extra integer);
ALTER TABLE cov_other.id_sequences DROP COLUMN extra;
DROP TABLE cov_other.id_sequences;
DROP SCHEMA cov_other;
SELECT seq_next('cov_keep');
SELECT seq_drop('cov_keep');

-- seq_unprefetch() (seq_lock_row()'s) of a name longer than any sequence's
-- (64 bytes): nothing is cached for it, the bound given comes back, and the
-- entry of the sequence named by its first 63 bytes is kept (its next ID
-- follows)
SELECT seq_create(repeat('x', 63), block_size => 10);
SELECT seq_next(repeat('x', 63));
SELECT seq_unprefetch(repeat('x', 64), 42);
SELECT seq_next(repeat('x', 63));
SELECT seq_drop(repeat('x', 63));
