-- Per call, the baseline: the same statement with a constant (the loop's own cost).
SELECT count(1) FROM generate_series(1, 100);
