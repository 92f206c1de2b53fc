-- Per call: 100 nextval() of the CACHE 1 sequence in one statement (and
-- so, as PostgreSQL's sequences do, WAL and a flushed commit each time).
SELECT count(nextval('uidgen_bench_nextval')) FROM generate_series(1, 100);
