-- Per call: 100 seq_reserve_block(name, 1000) in one statement (in the
-- select list of a subquery, as nextval() is in its anchor).
SELECT count(*) FROM (SELECT seq_reserve_block('uidgen_bench_reserve', 1000) FROM generate_series(1, 100)) AS s;
