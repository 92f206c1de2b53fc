-- Per call: 100 seq_next() in one statement.
SELECT count(seq_next('uidgen_bench_next')) FROM generate_series(1, 100);
