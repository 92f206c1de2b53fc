-- convert_to_snowflake() and convert_to_block_sequence() (issue 23): the
-- surface, what each conversion leaves behind, and every refusal.  The
-- concurrent inserts around a conversion: specs/convert_concurrent.spec.

-- What feeds a column: its default and identity.
CREATE FUNCTION pg_temp.feed(tbl regclass, col name) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(pg_get_expr(d.adbin, d.adrelid), '(no default)')
           || CASE a.attidentity WHEN 'a' THEN ', identity always'
                                 WHEN 'd' THEN ', identity by default' ELSE '' END
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = tbl AND a.attname = col
$$;

-- An error's detail.
CREATE FUNCTION pg_temp.detail_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    d text;
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RETURN d;
END $$;

SELECT p.oid::regprocedure AS function, provolatile, proparallel, proisstrict, prosecdef
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uidgen'
WHERE proname LIKE 'convert%' OR proname LIKE 'uidgen_co%'
ORDER BY p.oid::regprocedure::text COLLATE "C";

-- bigserial to snowflake_next(): existing rows stay, new IDs are above the
-- returned ID and the old ones; the old sequence stays, owned by the column.
CREATE TABLE conv_serial (id bigserial PRIMARY KEY, note text);
INSERT INTO conv_serial (note) SELECT 'old' FROM generate_series(1, 100);
SELECT pg_temp.feed('conv_serial', 'id') AS before;
BEGIN;
SELECT convert_to_snowflake('conv_serial', 'id') AS first \gset
-- the table is locked ACCESS EXCLUSIVE until the end of the transaction
SELECT mode FROM pg_locks
WHERE locktype = 'relation' AND relation = 'conv_serial'::regclass AND pid = pg_backend_pid()
ORDER BY mode;
COMMIT;
SELECT pg_temp.feed('conv_serial', 'id') AS after,
       pg_get_serial_sequence('conv_serial', 'id') AS old_sequence_kept;
INSERT INTO conv_serial (note) SELECT 'new' FROM generate_series(1, 100);
SELECT note, count(*), count(DISTINCT id) AS distinct_ids, min(id) > 0 AS positive,
       bool_and(id > :first) AS above_first,
       -- (the old rows are serial values, not snowflake IDs: no worker)
       bool_and(snowflake_worker(id) = current_setting('uidgen.worker_id')::int)
           FILTER (WHERE note = 'new') AS this_worker
FROM conv_serial GROUP BY note ORDER BY note;

-- identity (ALWAYS) to snowflake_next(): the identity and its sequence go.
CREATE TABLE conv_identity (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text);
INSERT INTO conv_identity (note) VALUES ('old');
SELECT pg_get_serial_sequence('conv_identity', 'id') AS identity_sequence;
SELECT convert_to_snowflake('conv_identity', 'id') > 1 AS converted;
SELECT pg_temp.feed('conv_identity', 'id') AS after,
       to_regclass('conv_identity_id_seq') AS identity_sequence;
INSERT INTO conv_identity (note) VALUES ('new');
INSERT INTO conv_identity (id, note) VALUES (7, 'explicit, allowed now');
SELECT note, id > 1000 AS big FROM conv_identity ORDER BY id;

-- a bigint column without a default
CREATE TABLE conv_plain (id bigint PRIMARY KEY);
INSERT INTO conv_plain VALUES (-5), (42);
SELECT convert_to_snowflake('conv_plain', 'id') > 42 AS converted, pg_temp.feed('conv_plain', 'id') AS after;

-- Refusals, each leaving the column as it was.
CREATE TABLE conv_int (id serial PRIMARY KEY);
CREATE TABLE conv_text (id text);
CREATE TABLE conv_default (id bigint DEFAULT 7);
CREATE TABLE conv_big (id bigserial PRIMARY KEY);
INSERT INTO conv_big VALUES (9000000000000000000);
CREATE TABLE conv_big_seq (id bigserial PRIMARY KEY);
SELECT setval('conv_big_seq_id_seq', 9000000000000000000);
SELECT q, error_of(q) FROM (VALUES
    ($$SELECT convert_to_snowflake('conv_int', 'id')$$),
    ($$SELECT convert_to_snowflake('conv_text', 'id')$$),
    ($$SELECT convert_to_snowflake('conv_default', 'id')$$),
    ($$SELECT convert_to_snowflake('conv_big', 'id')$$),
    ($$SELECT convert_to_snowflake('conv_big_seq', 'id')$$),
    ($$SELECT convert_to_snowflake('conv_serial', 'nope')$$),
    ($$SELECT convert_to_snowflake('conv_nope', 'id')$$)
) v(q);
SELECT pg_temp.feed('conv_int', 'id') AS conv_int, pg_temp.feed('conv_default', 'id') AS conv_default,
       pg_temp.feed('conv_big', 'id') AS conv_big, pg_temp.feed('conv_big_seq', 'id') AS conv_big_seq;
-- the detail says why: the largest value and the sequence's next value
SELECT regexp_replace(m, '\m[0-9]{15,18}\M', 'N', 'g') AS detail
FROM (VALUES ('conv_big'), ('conv_big_seq')) t(tbl),
     LATERAL (SELECT pg_temp.detail_of(format('SELECT convert_to_snowflake(%L, ''id'')', tbl)) AS m) d;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT error_of($$SELECT convert_to_snowflake('conv_plain', 'id')$$);
ROLLBACK;

-- convert_to_block_sequence(): bigserial whose sequence is ahead of the
-- column (rolled-back inserts): the block sequence starts at the
-- sequence's next value.
CREATE TABLE blk_serial (id bigserial PRIMARY KEY, note text);
INSERT INTO blk_serial (note) SELECT 'old' FROM generate_series(1, 10);
BEGIN;
INSERT INTO blk_serial (note) SELECT 'rolled back' FROM generate_series(1, 5);
ROLLBACK;
SELECT convert_to_block_sequence('blk_serial', 'id', 'blk_serial_ids') AS first_id;
SELECT pg_temp.feed('blk_serial', 'id') AS after,
       pg_get_serial_sequence('blk_serial', 'id') AS old_sequence_kept;
SELECT name, next_block_start, block_size, max_value, strategy FROM id_sequences WHERE name = 'blk_serial_ids';
INSERT INTO blk_serial (note) SELECT 'new' FROM generate_series(1, 3);
SELECT note, min(id), max(id) FROM blk_serial GROUP BY note ORDER BY min(id);

-- identity BY DEFAULT with an explicit value above the sequence: the block
-- sequence starts above the largest value; strategy 'sequence'.
CREATE TABLE blk_identity (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY);
INSERT INTO blk_identity DEFAULT VALUES;
INSERT INTO blk_identity VALUES (500);
SELECT convert_to_block_sequence('blk_identity', 'id', 'blk_identity_ids', block_size => 10,
                                 strategy => 'sequence') AS first_id;
SELECT pg_temp.feed('blk_identity', 'id') AS after,
       to_regclass('blk_identity_id_seq') AS identity_sequence;
INSERT INTO blk_identity DEFAULT VALUES;
SELECT id FROM blk_identity ORDER BY id;

-- integer and smallint columns: the block sequence ends at the type's end.
CREATE TABLE blk_int (id serial PRIMARY KEY);
CREATE TABLE blk_small (id smallserial PRIMARY KEY);
INSERT INTO blk_small VALUES (32767);
SELECT convert_to_block_sequence('blk_int', 'id', 'blk_int_ids') AS first_id;
SELECT name, next_block_start, max_value FROM id_sequences WHERE name = 'blk_int_ids';

-- A partitioned table: the lock, max() and the new default cover every
-- partition, also for rows inserted into a partition directly.
CREATE TABLE blk_part (id bigserial, k int, PRIMARY KEY (id, k)) PARTITION BY LIST (k);
CREATE TABLE blk_part1 PARTITION OF blk_part FOR VALUES IN (1);
CREATE TABLE blk_part2 PARTITION OF blk_part FOR VALUES IN (2);
INSERT INTO blk_part (k) SELECT 1 + i % 2 FROM generate_series(1, 10) i;
INSERT INTO blk_part2 VALUES (40, 2);
SELECT convert_to_block_sequence('blk_part', 'id', 'blk_part_ids') AS first_id;
INSERT INTO blk_part (k) VALUES (1), (2);
INSERT INTO blk_part1 (k) VALUES (1);
SELECT tableoid::regclass AS part, pg_temp.feed(tableoid::regclass, 'id') AS default,
       count(*), count(*) FILTER (WHERE id > 40) AS new
FROM blk_part GROUP BY tableoid ORDER BY 1;

-- Refusals: no values left, an existing sequence name, a text column, a
-- default that is not a sequence's; the column stays as it was.
SELECT seq_create('taken');
SELECT q, error_of(q) FROM (VALUES
    ($$SELECT convert_to_block_sequence('blk_small', 'id', 'blk_small_ids')$$),
    ($$SELECT convert_to_block_sequence('conv_int', 'id', 'taken')$$),
    ($$SELECT convert_to_block_sequence('conv_text', 'id', 'text_ids')$$),
    ($$SELECT convert_to_block_sequence('conv_default', 'id', 'default_ids')$$)
) v(q);
SELECT pg_temp.feed('blk_small', 'id') AS blk_small, pg_temp.feed('conv_int', 'id') AS conv_int;
SELECT count(*) AS sequences_left FROM id_sequences WHERE name IN ('blk_small_ids', 'text_ids', 'default_ids');
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT error_of($$SELECT convert_to_block_sequence('conv_int', 'id', 'ser_ids')$$);
ROLLBACK;

DROP TABLE conv_serial, conv_identity, conv_plain, conv_int, conv_text, conv_default, conv_big,
    conv_big_seq, blk_serial, blk_identity, blk_int, blk_small, blk_part;
SELECT seq_drop(name) FROM id_sequences
WHERE name IN ('blk_serial_ids', 'blk_identity_ids', 'blk_int_ids', 'blk_part_ids', 'taken');
