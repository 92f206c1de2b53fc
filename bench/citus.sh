#!/usr/bin/env bash
# Insert throughput through a Citus coordinator: a distributed table whose
# id is DEFAULT snowflake_next() against one whose id is bigserial (Citus's
# own distributed sequence), each filled by pgbench clients running
#   INSERT INTO t (k) SELECT g FROM generate_series(1, BENCH_ROWS) g
# on the coordinator (the default is evaluated there, the rows go to the
# shards on the workers).  Prints rows per second for each and the ratio.
# It is a benchmark, not a test: it exits 0 whenever it ran.
#
#   ./bench/citus.sh            against a coordinator (PGHOST, PGPORT,
#                               PGUSER, PGDATABASE) with citus and uidgen
#                               created and its workers added; it creates
#                               and drops tables uidgen_bench_citus_*
#   ./bench/citus.sh --cluster  as an unprivileged user (e.g. postgres):
#                               starts a throwaway coordinator and two
#                               workers with nothing configured for uidgen
#                               (ports BENCH_PORT .. +2, default 55440) in a
#                               temporary directory, runs, removes them
#
# BENCH_SECONDS (default 10) per run, BENCH_CLIENTS (default 2), BENCH_ROWS
# (default 100000) rows per statement.  PG_CONFIG, if set, picks the
# PostgreSQL installation (otherwise PATH's).
set -euo pipefail

if [ -n "${PG_CONFIG:-}" ]; then
    PATH="$("$PG_CONFIG" --bindir):$PATH"
    export PATH
fi
secs=${BENCH_SECONDS:-10}
clients=${BENCH_CLIENTS:-2}
rows=${BENCH_ROWS:-100000}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)

# A throwaway cluster: a coordinator and two workers, citus and uidgen
# preloaded, no uidgen.worker_id (each node adopts its Citus group id).
cluster() {
    local base=${BENCH_PORT:-55440} i port
    work=$(mktemp -d /tmp/uidgen-bench-citus.XXXXXX)
    trap 'for d in "$work"/n*; do pg_ctl -D "$d" -m immediate stop >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT
    for i in 0 1 2; do
        port=$((base + i))
        initdb -D "$work/n$i" -A trust --no-sync >/dev/null
        cat >>"$work/n$i/postgresql.conf" <<CONF
shared_preload_libraries = 'citus,uidgen'
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
max_prepared_transactions = 20
max_connections = 100
fsync = off
citus.node_conninfo = 'sslmode=disable'
CONF
        pg_ctl -D "$work/n$i" -l "$work/n$i.log" -w start >/dev/null
        "${PSQL[@]}" -h "$work" -p "$port" -d postgres -c 'CREATE EXTENSION citus'
    done
    export PGHOST=$work PGPORT=$base PGDATABASE=postgres
    "${PSQL[@]}" -c "SELECT citus_set_coordinator_host('$work', $base)" >/dev/null
    for i in 1 2; do
        "${PSQL[@]}" -c "SELECT citus_add_node('$work', $((base + i)))" >/dev/null
    done
    "${PSQL[@]}" -c 'CREATE EXTENSION uidgen'
}

[ "${1:-}" != --cluster ] || cluster

"${PSQL[@]}" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS uidgen_bench_citus_snowflake, uidgen_bench_citus_bigserial;
CREATE TABLE uidgen_bench_citus_snowflake (id bigint DEFAULT snowflake_next(), k int);
CREATE TABLE uidgen_bench_citus_bigserial (id bigserial, k int);
SELECT create_distributed_table('uidgen_bench_citus_snowflake', 'k');
SELECT create_distributed_table('uidgen_bench_citus_bigserial', 'k');
SQL

# Rows per second of one pgbench run into table $1.
run() {
    local script tps
    script=$(mktemp)
    echo "INSERT INTO $1 (k) SELECT g FROM generate_series(1, $rows) g;" >"$script"
    tps=$(pgbench -n -f "$script" -c "$clients" -j "$clients" -T "$secs" 2>/dev/null |
        sed -nE 's/^tps = ([0-9.]+).*/\1/p')
    rm -f "$script"
    awk -v t="$tps" -v r="$rows" 'BEGIN { printf "%.0f", t * r }'
}

snow=$(run uidgen_bench_citus_snowflake)
big=$(run uidgen_bench_citus_bigserial)
dups=$("${PSQL[@]}" -At -c 'SELECT count(*) - count(DISTINCT id) FROM uidgen_bench_citus_snowflake')
echo "$(postgres --version), Citus $("${PSQL[@]}" -At -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"), $clients clients, $rows rows per INSERT, ${secs} s each"
echo "DEFAULT snowflake_next(): $snow rows/s (duplicate IDs: $dups)"
echo "bigserial:                $big rows/s"
awk -v s="$snow" -v b="$big" 'BEGIN { printf "ratio snowflake_next() / bigserial: %.2f\n", s / b }'
"${PSQL[@]}" -c 'DROP TABLE uidgen_bench_citus_snowflake, uidgen_bench_citus_bigserial' >/dev/null
