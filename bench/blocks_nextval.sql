-- Anchor for seq_next(): nextval() on a CACHE 1 sequence.
SELECT nextval('uidgen_bench_nextval');
