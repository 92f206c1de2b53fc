-- seq_reserve_block(): one block of 1000 IDs per transaction.
SELECT * FROM seq_reserve_block('uidgen_bench_reserve', 1000);
