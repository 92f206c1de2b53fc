-- Anchor for seq_reserve_block(): nextval() on a sequence with INCREMENT
-- 1000 (1000 IDs per call, as a block of 1000).
SELECT nextval('uidgen_bench_nextval1000');
