#!/usr/bin/env bash
# The rule of docs/testing.md ("Which test runs where"): every test runs on
# every major.  A test runs only if the suite names it, so this fails (and
# says which) when a pg_regress file (sql/NAME.sql, but the install and
# update scripts uidgen--*.sql) is not in the Makefile's REGRESS, an
# isolation spec (specs/NAME.spec) not in ISOLATION, a name there has no
# file or no expected output, or a TAP file is not test/t/NNN_name.pl
# (make tapcheck runs test/t/*.pl).  scripts/test.sh runs it first.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
# The words of Makefile variable $1 (its continuation lines joined).
make_list() {
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' Makefile | sed -n "s/^$1 *= *//p" | tr -s ' \t' '\n' | grep -v '^$'
}
# Fail, saying $1.
bad() {
    echo "placement: $1" >&2
    status=1
}
regress=$(make_list REGRESS)
isolation=$(make_list ISOLATION)
for f in sql/*.sql; do
    n=$(basename "$f" .sql)
    case $n in uidgen--*) continue ;; esac
    grep -qxF "$n" <<<"$regress" || bad "$f is not in the Makefile's REGRESS: it would never run"
done
for f in specs/*.spec; do
    n=$(basename "$f" .spec)
    grep -qxF "$n" <<<"$isolation" || bad "$f is not in the Makefile's ISOLATION: it would never run"
done
for n in $regress; do
    [ -f "sql/$n.sql" ] || bad "REGRESS names $n, which has no sql/$n.sql"
    [ -f "expected/$n.out" ] || bad "REGRESS names $n, which has no expected/$n.out"
done
for n in $isolation; do
    [ -f "specs/$n.spec" ] || bad "ISOLATION names $n, which has no specs/$n.spec"
    [ -f "expected/$n.out" ] || bad "ISOLATION names $n, which has no expected/$n.out"
done
for f in expected/*.out; do
    n=$(basename "$f" .out)
    case $n in *_[0-9]) n=${n%_*} ;; esac
    grep -qxF "$n" <<<"$regress"$'\n'"$isolation" || bad "$f belongs to no test of REGRESS or ISOLATION"
done
for f in test/t/*; do
    [[ $f =~ ^test/t/[0-9]{3}_[a-z0-9_]+\.pl$ ]] || bad "$f is not named test/t/NNN_name.pl: make tapcheck would not run it"
done
[ $status -ne 0 ] || echo "placement: $(wc -w <<<"$regress") regress, $(wc -w <<<"$isolation") isolation and $(ls test/t/*.pl | wc -l) TAP files, each run on every major"
exit $status
