-- Block sequences of strategy 'sequence': a native sequence per block
-- sequence (INCREMENT BY block_size, one nextval() per block), behind the
-- same seq_reserve_block() and seq_next() as strategy 'table'.

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- The catalog: two columns, existing rows are 'table'
SELECT attnum, attname, format_type(atttypid, atttypmod), attnotnull,
       pg_get_expr(d.adbin, d.adrelid) AS default
  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE attrelid = 'id_sequences'::regclass AND attname IN ('strategy', 'sequence')
 ORDER BY attnum;
SELECT pg_temp.err($$INSERT INTO id_sequences (name, next_block_start, block_size, max_value, strategy)
                     VALUES ('bad', 1, 1, 10, 'sequence')$$);
SELECT pg_temp.err($$INSERT INTO id_sequences (name, next_block_start, block_size, max_value, strategy)
                     VALUES ('bad', 1, 1, 10, 'hilo')$$);

-- seq_create(): strategy 'table' stays the default
SELECT seq_create('nt_table', block_size => 100);
SELECT seq_create('nt_seq', block_size => 100, strategy => 'sequence');
SELECT seq_create('nt_neg', start => -250, block_size => 100, max_value => 49,
                  strategy => 'sequence');
SELECT name, next_block_start, block_size, max_value, exhausted, strategy,
       sequence IS NULL AS no_sequence
  FROM id_sequences WHERE name LIKE 'nt\_%' ORDER BY name;
-- the native sequence: next to id_sequences, named from the row, owned by
-- the name column, nobody else may use it
SELECT s.sequence::text = 'id_sequences_' || md5(s.name) AS named,
       c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'id_sequences'::regclass) AS same_schema,
       q.seqstart, q.seqincrement, q.seqmin, q.seqmax, q.seqcache, q.seqcycle,
       pg_get_serial_sequence('id_sequences', 'name') IS NULL AS not_serial,
       (SELECT refobjid = 'id_sequences'::regclass AND refobjsubid = 1 AND deptype = 'a'
          FROM pg_depend WHERE classid = 'pg_class'::regclass AND objid = s.sequence
           AND refclassid = 'pg_class'::regclass) AS owned_by_name,
       c.relacl IS NULL AS default_acl
  FROM id_sequences s JOIN pg_class c ON c.oid = s.sequence
  JOIN pg_sequence q ON q.seqrelid = s.sequence
 ORDER BY s.name;
-- errors
SELECT pg_temp.err($$SELECT seq_create('nt_x', strategy => 'hilo')$$);
SELECT pg_temp.err($$SELECT seq_create('nt_x', strategy => NULL)$$);
SELECT pg_temp.err($$SELECT seq_create('nt_seq', strategy => 'sequence')$$);
SELECT pg_temp.err($$SELECT seq_create('nt_seq')$$);
SELECT pg_temp.err($$SELECT seq_create('nt_table', strategy => 'sequence')$$);
SELECT pg_temp.err($$SELECT seq_create('nt_x', block_size => 0, strategy => 'sequence')$$);
SELECT pg_temp.err($$SELECT seq_create('nt_x', start => 10, max_value => 9, strategy => 'sequence')$$);
SELECT count(*) FROM id_sequences WHERE name = 'nt_x';
\set VERBOSITY default
SELECT seq_create('nt_x', strategy => 'hilo');
\set VERBOSITY terse

-- seq_reserve_block() and seq_next(): the same for both strategies
SELECT * FROM seq_reserve_block('nt_table');
SELECT * FROM seq_reserve_block('nt_seq');
SELECT * FROM seq_reserve_block('nt_table', 100);
SELECT * FROM seq_reserve_block('nt_seq', 100);
SELECT seq_next('nt_table'), seq_next('nt_table');
SELECT seq_next('nt_seq'), seq_next('nt_seq');
SELECT * FROM seq_reserve_block('nt_seq');
-- the position is in the native sequence, not in next_block_start
SELECT next_block_start, pg_sequence_last_value(sequence)
  FROM id_sequences WHERE name = 'nt_seq';
-- a reservation survives the caller's rollback
BEGIN;
SELECT * FROM seq_reserve_block('nt_seq');
ROLLBACK;
SELECT * FROM seq_reserve_block('nt_seq');
-- whole blocks only: n other than block_size is refused (22023)
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_seq', 5)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_seq', 200)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_seq', 0)$$);
-- and costs nothing
SELECT * FROM seq_reserve_block('nt_seq');

-- Exhaustion: as for strategy 'table' (2200H, sticky, cleared by seq_alter)
SELECT * FROM seq_reserve_block('nt_neg');
SELECT * FROM seq_reserve_block('nt_neg');
SELECT * FROM seq_reserve_block('nt_neg');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_neg')$$);
SELECT exhausted, pg_sequence_last_value(sequence) FROM id_sequences WHERE name = 'nt_neg';
\set VERBOSITY default
SELECT * FROM seq_reserve_block('nt_neg');
\set VERBOSITY terse
SELECT pg_temp.err($$SELECT seq_next('nt_neg')$$);
-- max_value cannot go below IDs handed out: here up to 49
SELECT pg_temp.err($$SELECT seq_alter('nt_neg', max_value => 48)$$);
SELECT seq_alter('nt_neg', max_value => 149);
SELECT exhausted FROM id_sequences WHERE name = 'nt_neg';
SELECT * FROM seq_reserve_block('nt_neg');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_neg')$$);
-- the top of bigint: 9223372036854775807 itself is never issued
SELECT seq_create('nt_top', start => 9223372036854775700, block_size => 50,
                  strategy => 'sequence');
SELECT * FROM seq_reserve_block('nt_top');
SELECT * FROM seq_reserve_block('nt_top');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_top')$$);
SELECT seq_drop('nt_top');

-- seq_alter(): max_value yes, block_size only unchanged (0A000)
SELECT seq_alter('nt_seq', max_value => 100000);
SELECT seq_alter('nt_seq', block_size => 100);
SELECT pg_temp.err($$SELECT seq_alter('nt_seq', block_size => 10)$$);
\set VERBOSITY default
SELECT seq_alter('nt_seq', block_size => 10);
\set VERBOSITY terse
SELECT block_size, max_value FROM id_sequences WHERE name = 'nt_seq';
SELECT pg_temp.err($$SELECT seq_alter('nt_seq', max_value => 699)$$);

-- seq_advance(): moves the native sequence forward, never back
SELECT seq_advance('nt_seq', 5);
SELECT seq_advance('nt_seq', 5000);
SELECT seq_advance('nt_seq', 4000);
SELECT next_block_start, pg_sequence_last_value(sequence) FROM id_sequences WHERE name = 'nt_seq';
SELECT * FROM seq_reserve_block('nt_seq');
SELECT seq_advance('nt_seq', 5050);
SELECT pg_temp.err($$SELECT seq_advance('nt_seq', 100000)$$);
-- a rollback does not move it back (setval() is not transactional): a gap
BEGIN;
SELECT seq_advance('nt_seq', 7000);
ROLLBACK;
SELECT * FROM seq_reserve_block('nt_seq');

-- seq_drop(): the native sequence goes with the row
SELECT sequence AS nt_seq_sequence FROM id_sequences WHERE name = 'nt_seq' \gset
SELECT seq_drop('nt_seq');
SELECT count(*) FROM pg_class WHERE relname = :'nt_seq_sequence';
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_seq')$$);
-- and a new one starts afresh
SELECT seq_create('nt_seq', start => 10, block_size => 10, strategy => 'sequence');
SELECT * FROM seq_reserve_block('nt_seq');
SELECT seq_next('nt_seq');
-- in a rolled back transaction, nothing is left behind
BEGIN;
SELECT seq_drop('nt_seq');
ROLLBACK;
BEGIN;
SELECT seq_create('nt_rolled_back', strategy => 'sequence');
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'id_sequences_' || md5('nt_rolled_back');
SELECT * FROM seq_reserve_block('nt_seq');
-- its increment changed by hand: the reservation fails (55000) until the
-- increment is the block size again
SELECT sequence AS nt_seq_sequence, block_size AS nt_seq_bs FROM id_sequences WHERE name = 'nt_seq' \gset
ALTER SEQUENCE :nt_seq_sequence INCREMENT BY 7;
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_seq')$$);
ALTER SEQUENCE :nt_seq_sequence INCREMENT BY :nt_seq_bs;
SELECT count(*) FROM seq_reserve_block('nt_seq');
-- a native sequence dropped by hand: the reservation fails (55000), the
-- row can still be dropped
SELECT sequence AS nt_seq_sequence FROM id_sequences WHERE name = 'nt_seq' \gset
DROP SEQUENCE :nt_seq_sequence;
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_seq')$$);
SELECT seq_drop('nt_seq');

-- The native sequence moved by hand (allocsql.c): a position whose next
-- block would pass bigint is exhausted (2200H), as is a setval(..., false)
-- past max_value that only nextval() shows; both recorded in the row
SELECT seq_create('nt_hand', block_size => 100, max_value => 1000,
                  strategy => 'sequence');
SELECT sequence AS nt_hand_sequence FROM id_sequences WHERE name = 'nt_hand' \gset
SELECT setval(:'nt_hand_sequence', 9223372036854775800);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_hand')$$);
SELECT exhausted FROM id_sequences WHERE name = 'nt_hand';
SELECT seq_drop('nt_hand');
SELECT seq_create('nt_hand', block_size => 100, max_value => 1000,
                  strategy => 'sequence');
SELECT sequence AS nt_hand_sequence FROM id_sequences WHERE name = 'nt_hand' \gset
SELECT setval(:'nt_hand_sequence', 950, false);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_hand')$$);
SELECT exhausted, pg_sequence_last_value(sequence) FROM id_sequences WHERE name = 'nt_hand';
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nt_hand')$$);
SELECT seq_drop('nt_hand');

SELECT seq_drop('nt_table');
SELECT seq_drop('nt_neg');
SELECT count(*) FROM pg_class WHERE relname LIKE 'id\_sequences\_%' AND relkind = 'S';
