-- seq_next(): one ID from the shared block cache.
SELECT seq_next('uidgen_bench_next');
