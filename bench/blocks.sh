#!/usr/bin/env bash
# Block sequences benchmark (psql and pgbench only).  Measures, in one run:
#   the anchor, a plain UPDATE ... RETURNING reservation, with 1, 2 and 8
#   clients;
#   seq_reserve_block() with 1 and 8 clients, on a sequence of strategy
#   'table' and on one of strategy 'sequence' (a native sequence, one
#   nextval() per block);
#   nextval() on a CACHE 1 sequence and seq_next(), with 2 clients;
# and prints reservations (or IDs) per second and the ratios to the anchors.
# Connection from PGHOST, PGPORT, PGUSER and PGDATABASE; the uidgen extension
# must exist in that database and the user must be able to call seq_create().
# BENCH_SECONDS (default 10) sets the length of each run.  PG_CONFIG, if
# set, picks the psql and pgbench of that installation (otherwise PATH's).
set -euo pipefail

if [ -n "${PG_CONFIG:-}" ]; then
    PATH="$("$PG_CONFIG" --bindir):$PATH"
    export PATH
fi

here=$(cd "$(dirname "$0")" && pwd)
secs=${BENCH_SECONDS:-10}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)

"${PSQL[@]}" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS uidgen_bench_anchor;
CREATE TABLE uidgen_bench_anchor (LIKE id_sequences INCLUDING ALL);
INSERT INTO uidgen_bench_anchor (name, next_block_start, block_size, max_value)
    VALUES ('anchor', 1, 1000, 9223372036854775807);
DROP SEQUENCE IF EXISTS uidgen_bench_nextval;
CREATE SEQUENCE uidgen_bench_nextval CACHE 1;
SELECT seq_drop(name) FROM id_sequences
    WHERE name IN ('uidgen_bench_reserve', 'uidgen_bench_reserve_seq', 'uidgen_bench_next');
SELECT seq_create('uidgen_bench_reserve', block_size => 1000);
SELECT seq_create('uidgen_bench_reserve_seq', block_size => 1000, strategy => 'sequence');
SELECT seq_create('uidgen_bench_next', block_size => 1000);
SQL

# tps of one pgbench run: run SCRIPT CLIENTS
run() {
    pgbench -n -M prepared -T "$secs" -c "$2" -j "$2" -f "$here/$1" 2>&1 |
        sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

# warm up the allocator and the caches
pgbench -n -M prepared -T 1 -c 2 -j 2 -f "$here/blocks_reserve.sql" >/dev/null 2>&1
pgbench -n -M prepared -T 1 -c 2 -j 2 -f "$here/blocks_reserve_seq.sql" >/dev/null 2>&1
pgbench -n -M prepared -T 1 -c 2 -j 2 -f "$here/blocks_seq_next.sql" >/dev/null 2>&1

anchor1=$(run blocks_anchor.sql 1)
anchor2=$(run blocks_anchor.sql 2)
anchor8=$(run blocks_anchor.sql 8)
reserve1=$(run blocks_reserve.sql 1)
reserve8=$(run blocks_reserve.sql 8)
seqres1=$(run blocks_reserve_seq.sql 1)
seqres8=$(run blocks_reserve_seq.sql 8)
nextval2=$(run blocks_nextval.sql 2)
seqnext2=$(run blocks_seq_next.sql 2)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
anchor_best=$(awk -v a="$anchor1" -v b="$anchor2" -v c="$anchor8" \
    'BEGIN { m = (a > b ? a : b); print (m > c ? m : c) }')

printf '%-44s %12s %8s\n' "benchmark (${secs}s each)" "per second" "ratio"
printf '%-44s %12.0f %8s\n' "anchor: UPDATE ... RETURNING, 1 client" "$anchor1" "1.00"
printf '%-44s %12.0f %8s\n' "anchor: UPDATE ... RETURNING, 2 clients" "$anchor2" "$(ratio "$anchor2" "$anchor1")"
printf '%-44s %12.0f %8s\n' "anchor: UPDATE ... RETURNING, 8 clients" "$anchor8" "$(ratio "$anchor8" "$anchor1")"
printf '%-44s %12.0f %8s  (target >= 0.8 x anchor, 1 client)\n' \
    "seq_reserve_block(), 1 client" "$reserve1" "$(ratio "$reserve1" "$anchor1")"
printf '%-44s %12.0f %8s  (target >= 2 x best anchor)\n' \
    "seq_reserve_block(), 8 clients" "$reserve8" "$(ratio "$reserve8" "$anchor_best")"
printf '%-44s %12.0f %8s  (x anchor, 1 client; %s x strategy table)\n' \
    "strategy sequence: seq_reserve_block(), 1" "$seqres1" "$(ratio "$seqres1" "$anchor1")" \
    "$(ratio "$seqres1" "$reserve1")"
printf '%-44s %12.0f %8s  (x anchor, 8 clients; %s x strategy table)\n' \
    "strategy sequence: seq_reserve_block(), 8" "$seqres8" "$(ratio "$seqres8" "$anchor8")" \
    "$(ratio "$seqres8" "$reserve8")"
printf '%-44s %12.0f %8s\n' "nextval() CACHE 1, 2 clients" "$nextval2" "1.00"
printf '%-44s %12.0f %8s  (target >= 1 x nextval())\n' \
    "seq_next(), 2 clients" "$seqnext2" "$(ratio "$seqnext2" "$nextval2")"

"${PSQL[@]}" >/dev/null <<'SQL'
DROP TABLE uidgen_bench_anchor;
DROP SEQUENCE uidgen_bench_nextval;
SELECT seq_drop('uidgen_bench_reserve');
SELECT seq_drop('uidgen_bench_reserve_seq');
SELECT seq_drop('uidgen_bench_next');
SQL
