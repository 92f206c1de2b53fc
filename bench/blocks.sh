#!/usr/bin/env bash
# Block sequences benchmark (psql and pgbench only).  Measures, in one run,
# each with 1 and 8 clients:
#   seq_reserve_block(name, 1000) on a sequence of strategy 'table' (carved
#   from the ranges prefetched into shared memory) against nextval() of a
#   sequence with INCREMENT 1000, and against the anchor, a plain
#   UPDATE ... RETURNING reservation on a copy of id_sequences;
#   seq_reserve_block() on one of strategy 'sequence' (a native sequence,
#   one nextval() per block in the allocator);
#   seq_next() against nextval() on a CACHE 1 sequence;
# and, as the ceiling of any call through pgbench, SELECT 1;
# each as one call per statement (every call pays a statement round trip)
# and as 100 calls per statement (SELECT count(f(...)) FROM
# generate_series(1, 100): the round trip amortised, count(1) as the loop's
# baseline); and prints calls per second (best and median) and the ratios,
# with the goals of issue 20 (>= 1x nextval() INCREMENT 1000 at 1 and 8
# clients, >= 10x the anchor at 1 client, seq_next() >= 1.5x nextval()
# CACHE 1).  The variants run interleaved in rounds; a ratio's goal is
# judged on the median over rounds of the ratio within a round (two runs
# seconds apart, so that the load of a shared machine weighs on both), and
# the ratio of the best runs is printed next to it.  One call per statement
# cannot be faster than SELECT 1: a goal above SELECT 1's own ratio (the
# ceiling) fails whatever the call costs, and says so; each such ratio is
# also given and judged net of the round trip (the time per statement
# minus that of SELECT 1 in the same round).
# Connection from PGHOST, PGPORT, PGUSER and PGDATABASE; the uidgen extension
# must exist in that database and the user must be able to call seq_create().
# BENCH_SECONDS (default 10) sets the length of each run, BENCH_ROUNDS
# (default 3) how many rounds are made; BENCH_RAW=1 also prints every run.  PG_CONFIG, if
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
DROP SEQUENCE IF EXISTS uidgen_bench_nextval1000;
CREATE SEQUENCE uidgen_bench_nextval1000 INCREMENT 1000 CACHE 1;
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
for s in blocks_reserve blocks_reserve_seq blocks_seq_next; do
    pgbench -n -M prepared -T 1 -c 2 -j 2 -f "$here/$s.sql" >/dev/null 2>&1
done

# The variants: name, script, calls per statement.  Statement kind: one
# call per statement, so each call pays a round trip (SELECT 1 is the
# ceiling).  Per-call kind: 100 calls in one statement, so the round trip
# is amortised (count(1) over the same loop is its baseline).
VARIANTS=(select1:blocks_select1:1 anchor:blocks_anchor:1 nv1000:blocks_nextval1000:1
          reserve:blocks_reserve:1 seqres:blocks_reserve_seq:1 nextval:blocks_nextval:1
          seqnext:blocks_seq_next:1
          loopx:blocks_loop_x100:100 nv1000x:blocks_nextval1000_x100:100
          reservex:blocks_reserve_x100:100 nextvalx:blocks_nextval_x100:100
          seqnextx:blocks_seq_next_x100:100)
rounds=${BENCH_ROUNDS:-3}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
pgver=$("${PSQL[@]}" -At -c "SELECT current_setting('server_version')")

# Rounds of every variant at 1 and 8 clients, interleaved (A B C ... A B C
# ...), each round starting one variant further on, so that no variant
# always runs first or after the same one.  Every run is kept: calls per
# second (tps x calls per statement), with its round, for the medians and
# the ratios paired within a round.
nv=${#VARIANTS[@]}
for round in $(seq "$rounds"); do
    for c in 1 8; do
        for k in $(seq 0 $((nv - 1))); do
            v=${VARIANTS[$(( (k + round - 1) % nv ))]}
            IFS=: read -r name script mult <<<"$v"
            tps=$(run "$script.sql" "$c")
            echo "$round $c $name $(awk -v t="${tps:-0}" -v m="$mult" 'BEGIN { printf "%.1f", t * m }')" >>"$results"
        done
    done
    echo "(round $round of $rounds done; load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# CPU per call in one backend, the commit's flush amortised away:
# SELECT count(*) FROM (SELECT E FROM generate_series(1, N)) in one
# statement, interleaved, BENCH_CPU_RUNS runs, net of E = 1.  Timed by the
# backend's own on-CPU time (/proc/self/schedstat, read with pg_read_file():
# Linux and a superuser), which the other jobs of a shared machine do not
# inflate as they do the wall clock; by clock_timestamp() otherwise.
cpu_n=${BENCH_CPU_N:-100000}
cpu=$("${PSQL[@]}" -At -F' ' <<SQL
CREATE TEMP TABLE uidgen_bench_cpu (e text, ns float8, clock text);
DO \$\$
DECLARE
    exprs text[] := ARRAY['1', 'nextval(''uidgen_bench_nextval'')',
                          'nextval(''uidgen_bench_nextval1000'')',
                          'seq_next(''uidgen_bench_next'')',
                          'seq_reserve_block(''uidgen_bench_reserve'', 1000)'];
    keys text[] := ARRAY['base', 'nextval', 'nv1000', 'seqnext', 'reserve'];
    t timestamptz;
    c0 bigint;
    oncpu boolean := true;
    clock text;
BEGIN
    BEGIN
        PERFORM split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
    EXCEPTION WHEN OTHERS THEN
        oncpu := false;
    END;
    clock := CASE WHEN oncpu THEN 'on-CPU' ELSE 'wall' END;
    FOR r IN 1..${BENCH_CPU_RUNS:-5} LOOP
        FOR i IN 1..array_length(exprs, 1) LOOP
            IF oncpu THEN
                c0 := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
            END IF;
            t := clock_timestamp();
            EXECUTE format('SELECT count(*) FROM (SELECT %s FROM generate_series(1, %s)) s',
                           exprs[i], $cpu_n);
            INSERT INTO uidgen_bench_cpu VALUES (keys[i],
                CASE WHEN oncpu
                     THEN (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - c0)::float8 / $cpu_n
                     ELSE extract(epoch FROM clock_timestamp() - t) * 1e9 / $cpu_n END,
                clock);
        END LOOP;
    END LOOP;
END \$\$;
SELECT e, min(ns), percentile_cont(0.5) WITHIN GROUP (ORDER BY ns), min(clock)
    FROM uidgen_bench_cpu GROUP BY e;
SQL
)

echo "bench/blocks.sh  $(date -u '+%Y-%m-%d %H:%M UTC'); PostgreSQL $pgver; $(nproc) cores"
echo "load average (1, 5, 15 min) at start: $load_start; at end: $load_end"
echo "pgbench -M prepared, ${secs} s per run, $rounds rounds, variants interleaved"

# The report, from the runs: awk ROUNDS < results
cpu_n=$cpu_n awk -v rounds="$rounds" '
function median(list,    a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++)
        for (j = i + 1; j <= n; j++)
            if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    if (n == 0) return 0
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function best(list,    a, n, i, m) {
    n = split(list, a, " ")
    m = 0
    for (i = 1; i <= n; i++) if (a[i] + 0 > m) m = a[i] + 0
    return m
}
# the median over rounds of x / y measured in the same round
function paired(x, y, c,    r, list) {
    list = ""
    for (r = 1; r <= rounds; r++)
        if (v[r, c, y] > 0) list = list " " v[r, c, x] / v[r, c, y]
    return median(list)
}
# the median over rounds of x / y net of the round trip: the time per call
# minus that of SELECT 1 in the same round (1e9: x not above SELECT 1)
function netpaired(x, y, c,    r, list, s, a, b) {
    list = ""
    for (r = 1; r <= rounds; r++) {
        s = v[r, c, "select1"]
        if (s <= 0 || v[r, c, x] <= 0 || v[r, c, y] <= 0) continue
        a = 1 / v[r, c, x] - 1 / s; b = 1 / v[r, c, y] - 1 / s
        list = list " " (a > 0 ? b / a : 1e9)
    }
    return median(list)
}
# PASS or FAIL, and why a goal above the ceiling (SELECT 1 / y; 1e9: none) fails
function verdict(r, m, ceil) {
    if (r >= m) return "PASS"
    return ceil < m ? sprintf("FAIL: above the ceiling, SELECT 1 is %.2fx", ceil) : "FAIL"
}
function times(r) { return r >= 1000 ? sprintf("%10s ", ">999x") : sprintf("%10.2fx", r) }
# one CPU row: ns net of the baseline, best and median
function cpurow(label, e) {
    printf "  %-30s %8.1f %8.1f\n", label, cpumin[e] - cpumin["base"], cpumed[e] - cpumed["base"]
}
# how many times cheaper y is than x, net, in array a (cpumin or cpumed)
function cpuratio(x, y, a,    d) {
    d = a[y] - a["base"]
    return d > 0 ? (a[x] - a["base"]) / d : 0
}
function row(label, name) {
    printf "%-44s %11.0f %11.0f %11.0f %11.0f\n", label,
        best(all[1, name]), median(all[1, name]), best(all[8, name]), median(all[8, name])
}
# a ratio row: paired median at 1 and 8 clients, ratio of bests, goal;
# per statement (stmt) a goal is judged against the ceiling of the round trip
# too, and a second row gives the ratio net of the round trip, judged
function ratio(label, x, y, goal, goal8, stmt,    p1, p8, b1, b8, c1, c8, g) {
    p1 = paired(x, y, 1); p8 = paired(x, y, 8)
    b1 = best(all[1, y]) > 0 ? best(all[1, x]) / best(all[1, y]) : 0
    b8 = best(all[8, y]) > 0 ? best(all[8, x]) / best(all[8, y]) : 0
    c1 = stmt ? paired("select1", y, 1) : 1e9; c8 = stmt ? paired("select1", y, 8) : 1e9
    g = ""
    if (goal != "")
        g = sprintf("goal >= %sx: %s (1)%s", goal, verdict(p1, goal, c1),
                    goal8 ? sprintf(", %s (8)", verdict(p8, goal, c8)) : "")
    printf "%-44s %10.2fx %10.2fx %10.2fx %10.2fx  %s\n", label, p1, b1, p8, b8, g
    if (!stmt || goal == "")
        return
    p1 = netpaired(x, y, 1); p8 = netpaired(x, y, 8)
    g = sprintf("goal >= %sx: %s (1)%s", goal, verdict(p1, goal, 1e9),
                goal8 ? sprintf(", %s (8)", verdict(p8, goal, 1e9)) : "")
    printf "%-44s %s %10s  %s %10s  %s\n", "  the same, net of the round trip", times(p1), "", times(p8), "", g
}
# one row of net ns per call: x against y, or "below the noise" for y
function netrow(lx, x, ly, y,    a, b) {
    a = net(x); b = net(y)
    if (b > 0)
        printf "  %s %.0f, %s %.0f: %.2fx\n", lx, a, ly, b, a / b
    else
        printf "  %s %.0f, %s %.0f (not above the loop baseline: no ratio)\n", lx, a, ly, b
}
# ns per call in one backend, net of the loop (1 client, medians)
function net(name,    t, l) {
    t = median(all[1, name]); l = median(all[1, "loopx"])
    if (t <= 0 || l <= 0) return 0
    return 1e9 / t - 1e9 / l
}
$1 == "cpu" { cpumin[$2] = $3; cpumed[$2] = $4; cpuclock = $5; next }
{ v[$1, $2, $3] = $4; all[$2, $3] = all[$2, $3] " " $4 }
END {
    printf "%-44s %11s %11s %11s %11s\n", "calls per second", "1: best", "1: median", "8: best", "8: median"
    print "-- one call per statement (each pays a round trip)"
    row("ceiling: SELECT 1", "select1")
    row("anchor: UPDATE ... RETURNING 1000", "anchor")
    row("nextval() INCREMENT 1000", "nv1000")
    row("seq_reserve_block(name, 1000), table", "reserve")
    row("seq_reserve_block(name), sequence", "seqres")
    row("nextval() CACHE 1", "nextval")
    row("seq_next()", "seqnext")
    print "-- per call: 100 calls per statement (round trip amortised)"
    row("loop baseline: count(1), 100 rows", "loopx")
    row("nextval() INCREMENT 1000", "nv1000x")
    row("seq_reserve_block(name, 1000), table", "reservex")
    row("nextval() CACHE 1", "nextvalx")
    row("seq_next()", "seqnextx")
    print ""
    printf "%-44s %11s %11s %11s %11s\n", "ratios", "1: paired", "1: bests", "8: paired", "8: bests"
    print "(paired: the median over rounds of the ratio of two runs of the same round)"
    print "-- one call per statement"
    ratio("seq_reserve_block() / nextval() INCR 1000", "reserve", "nv1000", 1, 1, 1)
    ratio("seq_reserve_block() / anchor", "reserve", "anchor", 10, 0, 1)
    ratio("sequence strategy / nextval() INCR 1000", "seqres", "nv1000", "", 0, 1)
    ratio("seq_next() / nextval() CACHE 1", "seqnext", "nextval", 1.5, 1, 1)
    ratio("seq_reserve_block() / SELECT 1", "reserve", "select1", "", 0, 1)
    ratio("seq_next() / SELECT 1", "seqnext", "select1", "", 0, 1)
    print "-- per call (100 calls per statement)"
    ratio("seq_reserve_block() / nextval() INCR 1000", "reservex", "nv1000x", 1, 1, 0)
    ratio("seq_next() / nextval() CACHE 1", "seqnextx", "nextvalx", 1.5, 1, 0)
    print ""
    print "ns per call through pgbench, 1 client, net of the loop baseline (medians; each statement commits):"
    netrow("nextval() INCREMENT 1000", "nv1000x", "seq_reserve_block(name, 1000)", "reservex")
    netrow("nextval() CACHE 1", "nextvalx", "seq_next()", "seqnextx")
    print "ns per call, " cpuclock " time of one backend, one statement of " ENVIRON["cpu_n"] " calls, net of count(1) (best, median of runs):"
    cpurow("nextval() CACHE 1", "nextval")
    cpurow("seq_next()", "seqnext")
    cpurow("nextval() INCREMENT 1000", "nv1000")
    cpurow("seq_reserve_block(name, 1000)", "reserve")
    printf "  seq_next() / nextval() CACHE 1: %.2fx (best), %.2fx (median); seq_reserve_block() / nextval() INCREMENT 1000: %.2fx, %.2fx (0.00x: not above the noise)\n",
        cpuratio("nextval", "seqnext", cpumin), cpuratio("nextval", "seqnext", cpumed),
        cpuratio("nv1000", "reserve", cpumin), cpuratio("nv1000", "reserve", cpumed)
    if (ENVIRON["BENCH_RAW"] != "") {
        print ""
        print "raw runs (round clients variant calls/s):"
    }
}' "$results" <(echo "$cpu" | sed 's/^/cpu /')
[ -z "${BENCH_RAW:-}" ] || cat "$results"

"${PSQL[@]}" >/dev/null <<'SQL'
DROP TABLE uidgen_bench_anchor;
DROP SEQUENCE uidgen_bench_nextval;
DROP SEQUENCE uidgen_bench_nextval1000;
SELECT seq_drop('uidgen_bench_reserve');
SELECT seq_drop('uidgen_bench_reserve_seq');
SELECT seq_drop('uidgen_bench_next');
SQL
