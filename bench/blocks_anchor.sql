-- Anchor: the hand-rolled reservation, a plain UPDATE ... RETURNING on a
-- copy of id_sequences (one row, one commit per reservation).
UPDATE uidgen_bench_anchor
   SET next_block_start = next_block_start + 1000
 WHERE name = 'anchor'
RETURNING next_block_start - 1000 AS first_id, next_block_start - 1 AS last_id;
