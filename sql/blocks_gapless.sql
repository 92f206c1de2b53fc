-- Block sequences of strategy 'gapless': numbers taken by an UPDATE of the
-- row in the caller's own transaction, so a rollback gives them back.

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- The catalog accepts the strategy, without a native sequence
SELECT pg_temp.err($$INSERT INTO id_sequences (name, next_block_start, block_size, max_value, strategy, sequence)
                     VALUES ('bad', 1, 1, 10, 'gapless', 'pg_class'::regclass)$$);
SELECT seq_create('gl', block_size => 5, strategy => 'gapless');
SELECT name, next_block_start, block_size, exhausted, strategy, sequence
  FROM id_sequences WHERE name = 'gl';
SELECT pg_temp.err($$SELECT seq_create('bad', strategy => 'Gapless')$$);

-- seq_next() and both seq_reserve_block(): consecutive numbers
SELECT seq_next('gl'), seq_next('gl');
SELECT * FROM seq_reserve_block('gl');
SELECT * FROM seq_reserve_block('gl', 3);
SELECT seq_next('gl');

-- a rollback gives the numbers back, also to a savepoint and after an error
BEGIN;
SELECT seq_next('gl');
SELECT * FROM seq_reserve_block('gl', 10);
ROLLBACK;
BEGIN;
SELECT seq_next('gl');
SAVEPOINT sp;
SELECT seq_next('gl');
ROLLBACK TO SAVEPOINT sp;
SELECT seq_next('gl');
SELECT pg_temp.err($$SELECT seq_next('gl') / 0$$);
COMMIT;
SELECT seq_next('gl');
SELECT next_block_start FROM id_sequences WHERE name = 'gl';

-- never in the prefetch cache: no carving position, nothing held ahead
SELECT name, strategy, next_block_start, next_id, reserved_ahead, refill_size
  FROM id_sequences_prefetch WHERE name = 'gl';

-- the row is the caller's: a caller holding it sees its own position
BEGIN;
SELECT seq_next('gl');
SELECT next_block_start FROM id_sequences WHERE name = 'gl';
COMMIT;

-- exhaustion: exact; the row is not marked (the caller's rollback would
-- undo that), and a smaller request that fits is still served
SELECT seq_create('gl_small', start => 8, max_value => 10, strategy => 'gapless');
\set VERBOSITY default
SELECT * FROM seq_reserve_block('gl_small', 4);
\set VERBOSITY terse
SELECT * FROM seq_reserve_block('gl_small', 3);
SELECT pg_temp.err($$SELECT seq_next('gl_small')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('gl_small')$$);
SELECT exhausted FROM id_sequences WHERE name = 'gl_small';
SELECT seq_alter('gl_small', max_value => 11);
SELECT seq_next('gl_small');
-- the last bigint is never issued, as for the other strategies
SELECT seq_create('gl_top', start => 9223372036854775805, strategy => 'gapless');
SELECT seq_next('gl_top'), seq_next('gl_top');
SELECT pg_temp.err($$SELECT seq_next('gl_top')$$);

-- n out of range, unknown names: as for the other strategies
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('gl', 0)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('gl', 1000000001)$$);
SELECT pg_temp.err($$SELECT seq_next('gl_nosuch')$$);

-- seq_alter(), seq_advance() (in the caller's transaction too) and seq_drop()
SELECT seq_alter('gl', block_size => 2);
SELECT * FROM seq_reserve_block('gl');
SELECT seq_advance('gl', 100);
SELECT seq_next('gl');
BEGIN;
SELECT seq_advance('gl', 1000);
ROLLBACK;
SELECT seq_next('gl');
SELECT pg_temp.err($$SELECT seq_alter('gl', max_value => 100)$$);

-- a role without any privilege on id_sequences may take numbers
CREATE ROLE gl_user;
GRANT USAGE ON SCHEMA public TO gl_user;
SET ROLE gl_user;
SELECT pg_temp.err($$UPDATE id_sequences SET next_block_start = 1$$);
SELECT seq_next('gl');
RESET ROLE;

-- a hostile search_path does not redirect the UPDATE
CREATE SCHEMA gl_evil;
CREATE TABLE gl_evil.id_sequences (LIKE id_sequences);
SET search_path = gl_evil, public;
SELECT seq_next('gl');
SELECT count(*) FROM gl_evil.id_sequences;
RESET search_path;
DROP SCHEMA gl_evil CASCADE;

-- a sequence dropped and recreated with another strategy is served by it
SELECT seq_drop('gl_small');
SELECT seq_create('gl_small', start => 50, block_size => 10);
SELECT seq_next('gl_small');
SELECT seq_drop('gl_small');
SELECT seq_create('gl_small', start => 500, strategy => 'gapless');
SELECT seq_next('gl_small');
BEGIN;
SELECT seq_next('gl_small');
ROLLBACK;
SELECT seq_next('gl_small');

SELECT seq_drop('gl');
SELECT seq_drop('gl_small');
SELECT seq_drop('gl_top');
DROP OWNED BY gl_user;
DROP ROLE gl_user;
