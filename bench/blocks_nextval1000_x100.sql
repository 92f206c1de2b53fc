-- Per call: 100 nextval() of the INCREMENT 1000 sequence in one statement
-- (in the select list of a subquery, as seq_reserve_block() is).  A
-- statement that draws from a sequence more than its 32 values logged
-- ahead writes WAL and commits with a flush, as PostgreSQL's sequences do.
SELECT count(*) FROM (SELECT nextval('uidgen_bench_nextval1000') FROM generate_series(1, 100)) AS s;
