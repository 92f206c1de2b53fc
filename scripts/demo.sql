-- uidgen demo: run by scripts/demo.sh against a throwaway cluster.
\pset footer off
CREATE EXTENSION uidgen;

\echo '== a table keyed by snowflake IDs'
CREATE TABLE orders (
    id bigint PRIMARY KEY DEFAULT snowflake_next(),
    item text NOT NULL
);
INSERT INTO orders (item) VALUES ('apple'), ('pear'), ('plum');

\echo '== each ID decoded (worker 1: the demo cluster sets uidgen.worker_id = 1, as the README''s installation does)'
SELECT id, snowflake_timestamp(id) AS generated_at,
       snowflake_worker(id) AS worker, snowflake_sequence(id) AS sequence, item
FROM orders ORDER BY id;

\echo '== rows of the last day, by ID range'
SELECT count(*) FROM orders WHERE id >= snowflake_floor(now() - interval '1 day');

\echo '== a burst of one million IDs, all distinct'
SELECT count(DISTINCT snowflake_next()) AS distinct_ids FROM generate_series(1, 1000000);

\echo '== UUIDv7'
SELECT u AS uuid, uuidv7_timestamp(u) AS generated_at
FROM (SELECT uuidv7_next() AS u FROM generate_series(1, 3)) AS g;

\echo '== block sequences: a range of 1000 IDs, then single IDs from the shared cache'
SELECT seq_create('invoices', block_size => 1000);
SELECT * FROM seq_reserve_block('invoices', 1000);
SELECT seq_next('invoices') AS next_1, seq_next('invoices') AS next_2;

\echo '== generator status'
\x on
SELECT * FROM uidgen_status();
