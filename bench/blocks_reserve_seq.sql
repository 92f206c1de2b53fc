-- seq_reserve_block() on a sequence of strategy 'sequence': one block of
-- 1000 IDs (one nextval() in the allocator) per transaction.
SELECT * FROM seq_reserve_block('uidgen_bench_reserve_seq');
