#!/usr/bin/env bash
# The include graph of src/: one node per module (a .c and its .h are one
# node, named by its path under src/ without the extension), an edge for
# each #include "..." of another module.  Prints the modules layer by layer
# (layer 0 includes no other module; every module includes only modules of
# lower layers), then the same for the folders of src/, and exits 1 if
# either graph has a cycle, naming the modules or folders on it.
# scripts/test.sh runs it before building, so a cycle fails CI.
#
# Usage: scripts/include_graph.sh [-v]   (-v: also each module's includes)
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../src" && pwd -P)
verbose=${1:-}

cd "$src"
# "node dependency" lines, from the #include "..." lines of every file
find . -name '*.[ch]' | sed 's|^\./||' | sort | while read -r f; do
    node=${f%.*}
    echo "$node -"
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r inc; do
            [ -f "$inc" ] || continue    # a PostgreSQL header
            dep=${inc%.*}
            [ "$dep" = "$node" ] || echo "$node $dep"
        done
done | awk -v verbose="$verbose" '
# Kahn: peel off the nodes whose dependencies are all placed; what is left
# is on a cycle or above one.
function layer(kind, nodes, deps, ndeps,    placed, n, d, changed, level, ok, line, left, count) {
    level = 0
    do {
        changed = 0; line = ""; count = 0
        for (n in nodes) {
            if (n in placed) continue
            ok = 1
            for (d = 1; d <= ndeps[n]; d++)
                if (!(deps[n, d] in placed) || placed[deps[n, d]] == level) { ok = 0; break }
            if (ok) { placed[n] = level; changed = 1 }
        }
        # placed this round: print them sorted
        for (n in nodes) if ((n in placed) && placed[n] == level) line = line " " n
        if (changed) {
            printf "%s layer %d:%s\n", kind, level, sorted(line)
            level++
        }
    } while (changed)
    # what is left includes a cycle; keep only what is on one: peel off the
    # nodes that nothing left includes, then walk from one of the rest
    do {
        changed = 0
        for (n in nodes) if (!(n in placed)) included[n] = 0
        for (n in nodes) if (!(n in placed))
            for (d = 1; d <= ndeps[n]; d++)
                if (!(deps[n, d] in placed)) included[deps[n, d]] = 1
        for (n in nodes) if (!(n in placed) && !included[n]) { placed[n] = -1; changed = 1 }
    } while (changed)
    left = ""
    for (n in nodes) if (!(n in placed)) left = left " " n
    if (left == "") return 0
    split(sorted(left), start, " ")
    n = start[1]; path = ""
    while (!(n in onpath)) {
        onpath[n] = 1; path = path " " n
        for (d = 1; d <= ndeps[n]; d++) if (!(deps[n, d] in placed)) { n = deps[n, d]; break }
    }
    line = substr(path, index(path " ", " " n " "))
    gsub(/ /, " -> ", line)
    printf "CYCLE among %ss: %s -> %s\n", kind, substr(line, 5), n
    printf "(%ss on a cycle:%s)\n", kind, sorted(left)
    return 1
    return 0
}
function sorted(s,    a, n, i, j, t, out) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    out = ""
    for (i = 1; i <= n; i++) out = out " " a[i]
    return out
}
function folder(n) { return n ~ /\// ? substr(n, 1, index(n, "/") - 1) : "." }
{
    nodes[$1] = 1
    fnodes[folder($1)] = 1
    if ($2 == "-") next
    if (!(($1, $2) in seen)) { seen[$1, $2] = 1; deps[$1, ++ndeps[$1]] = $2 }
    if (verbose == "-v" && !(($1, $2) in shown)) { shown[$1, $2] = 1; edges = edges sprintf("  %s -> %s\n", $1, $2) }
    a = folder($1); b = folder($2)
    if (a != b && !((a, b) in fseen)) { fseen[a, b] = 1; fdeps[a, ++nfdeps[a]] = b }
}
END {
    if (verbose == "-v") printf "includes:\n%s", edges
    bad = layer("module", nodes, deps, ndeps)
    for (a in fnodes) for (d = 1; d <= nfdeps[a]; d++) fl = fl sprintf(" %s->%s", a, fdeps[a, d])
    printf "folder includes:%s\n", sorted(fl)
    bad = layer("folder", fnodes, fdeps, nfdeps) || bad
    exit bad
}'
