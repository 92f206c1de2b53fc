#!/usr/bin/env bash
# Run the SQL examples of the docs and check their shown output.
#
# Usage: scripts/doctest.sh [FILE.md ...]   (default: README.md docs/*.md)
#
# Every fenced block whose info string is exactly `sql` runs against the
# server that libpq's environment names (PGHOST, PGPORT, PGUSER; a server
# with uidgen preloaded and uidgen.worker_id = 1, as scripts/test.sh starts
# one), in a fresh database per file (dropped again at the end) in which
# `CREATE EXTENSION uidgen` has been run; the blocks of a file run in order
# in that database, each with `psql -X -q -v ON_ERROR_STOP=1 -P pager=off`.
# A fenced block with info string `output` right after it (only blank lines
# between) must equal what psql printed on standard output, psql's default
# aligned format; trailing blanks of each line and blank lines at the end are
# not compared (the docs' editor config trims them).  Blocks with any other
# info string (`sql norun`, `sql citus`, ...) are not run here.  A failing
# block is named by file and line; the run goes on with the next file and
# exits non-zero if any block failed.  Roles an example creates outlive its
# database: run it against a throwaway server.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(README.md docs/*.md)
tmp=$(mktemp -d /tmp/uidgen-doctest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Split file $1 into $2/N.sql (block N's SQL), $2/N.out (its shown output,
# if any) and $2/list (one line per block: N and the line of its fence).
extract() {
    awk -v dir="$2" '
        function strip(s) { return substr(s, 1, indent) ~ /^ *$/ ? substr(s, indent + 1) : s }
        # an opening fence: its indentation and info string
        !inb && /^ *```/ {
            match($0, /^ */); indent = RLENGTH
            info = substr($0, indent + 4); sub(/[ \t]+$/, "", info)
            inb = 1
            if (info == "sql") { n++; kind = "sql"; print n, NR > (dir "/list"); printf "" > (dir "/" n ".sql") }
            else if (info == "output" && want_out) { kind = "out"; printf "" > (dir "/" n ".out") }
            else kind = ""
            want_out = 0
            next
        }
        inb && /^ *```[ \t]*$/ { inb = 0; want_out = (kind == "sql"); next }
        inb && kind == "sql" { print strip($0) > (dir "/" n ".sql"); next }
        inb && kind == "out" { print strip($0) > (dir "/" n ".out"); next }
        !inb && /[^ \t]/ { want_out = 0 }
    ' "$1"
}

# Drop trailing blanks of every line and blank lines at the end.
normalize() {
    sed -e 's/[ \t]*$//' "$1" | awk '{ a[NR] = $0 } /./ { last = NR } END { for (i = 1; i <= last; i++) print a[i] }'
}

failed=0 blocks=0 checked=0
for f in "${files[@]}"; do
    d=$tmp/$(basename "$f" .md)
    mkdir -p "$d"
    extract "$f" "$d"
    [ -s "$d/list" ] || continue
    db=doctest_$(basename "$f" .md | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9\n' _)
    if ! { PGOPTIONS='-c client_min_messages=warning' dropdb --if-exists "$db" && createdb "$db" &&
        psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c 'CREATE EXTENSION uidgen'; }; then
        echo "FAIL $f: could not create the database $db with uidgen"
        failed=1
        continue
    fi
    while read -r n line; do
        blocks=$((blocks + 1))
        if ! psql -X -q -v ON_ERROR_STOP=1 -P pager=off -d "$db" -f "$d/$n.sql" >"$d/$n.got" 2>"$d/$n.err"; then
            echo "FAIL $f:$line: the sql block failed:"
            cat "$d/$n.err"
            failed=1
            continue
        fi
        [ -f "$d/$n.out" ] || continue
        checked=$((checked + 1))
        if ! diff -u --label "$f:$line (shown)" --label "$f:$line (psql)" \
            <(normalize "$d/$n.out") <(normalize "$d/$n.got") >"$d/$n.diff"; then
            echo "FAIL $f:$line: the output block differs from psql's output:"
            cat "$d/$n.diff"
            failed=1
        fi
    done <"$d/list"
    dropdb "$db" || failed=1
done
echo "== doc examples: $blocks sql blocks run, $checked outputs compared$([ $failed -eq 0 ] && echo ', all passed' || echo ', FAILED')"
exit $failed
