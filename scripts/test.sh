#!/usr/bin/env bash
# Set up everything on a fresh Debian 12 machine and run the whole test
# suite: pg_regress and isolation specs (make installcheck) against a
# throwaway cluster with uidgen preloaded, the docs' SQL examples
# (scripts/doctest.sh) on another, then the TAP tests (make tapcheck), all
# as the unprivileged "postgres" account.  Exits non-zero on any failure.
# Run as root: ./scripts/test.sh
# UIDGEN_PG_MAJOR picks another of Debian's PostgreSQL majors (default 15),
# UIDGEN_PG_CONFIG a PostgreSQL installed some other way (scripts/common.sh).
# UIDGEN_COVERAGE=1 builds uidgen with gcov instrumentation (--coverage -O0,
# and -DUIDGEN_GCOV: a process killed at a crash point writes its counts
# first, src/core/crashpoint.c) for the run, prints lcov's summary of src/
# per file (lines, functions, branches) and the totals after it, raw and
# without the branches inside PostgreSQL's macros, says where the coverage
# is below its targets (coverage_check; with UIDGEN_COVERAGE_STRICT=1 that
# fails the run), and reinstalls the
# ordinary build; UIDGEN_COVERAGE_INFO=FILE keeps lcov's tracefile (per
# line and branch) there, and the filtered one in FILE-filtered.info
# (FILE without its .info).  UIDGEN_COVERAGE=report prints the figures but
# checks no target (a major whose counts another major's run merges);
# UIDGEN_COVERAGE_WITH="FILE ..." names filtered tracefiles of the same
# sources from other majors' runs: their counts are added to this run's
# (coverage_merge) and the targets are checked on the sum.
# First of all, scripts/include_graph.sh prints the layers of src/ and
# fails the run if its include graph has a cycle.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/coverage.sh"

"$UIDGEN_SRC/scripts/include_graph.sh"
# Every test file is one the suite runs (docs/testing.md, "Which test runs where").
"$UIDGEN_SRC/scripts/placement.sh"
require_root
PACKAGES+=("${TEST_PACKAGES[@]}" "${PATRONI_PACKAGES[@]}")
COVERAGE=${UIDGEN_COVERAGE:-}
[ -z "$COVERAGE" ] || PACKAGES+=(lcov)
install_packages
# A test build: uidgen's crash points (src/core/crashpoint.h) are compiled in.
export UIDGEN_CRASH_POINTS=1
# The pg_upgrade test (test/t/110_pg_upgrade.pl) upgrades from the older
# major installed in $UIDGEN_UPGRADE_FROM, which needs uidgen too.
[ -z "${UIDGEN_UPGRADE_FROM:-}" ] || build_and_install "$UIDGEN_UPGRADE_FROM/bin/pg_config"
if [ -n "$COVERAGE" ]; then
    leg "build (gcov)" build_and_install "$PG_CONFIG" COPT="-O0 --coverage -DUIDGEN_GCOV"
else
    leg build build_and_install
fi
# Citus for test/t/160_citus.pl, from the archives in UIDGEN_CITUS_DIR
# (default ../shared/citus); without them that test skips, saying why.
leg "Citus build" "$UIDGEN_SRC/scripts/citus.sh"

work=$(make_workdir)
trap 'stop_cluster "$work"; stop_cluster "$work/doc"' EXIT
copy_for_tests "$work/src"
cd "$work/src"
# The servers (running as $RUN_AS) write their gcov counts below this
# directory instead of next to the objects in the checkout.
[ -z "$COVERAGE" ] || export GCOV_PREFIX=$work/gcov

# lcov's summary of the counts the servers wrote below $GCOV_PREFIX, per
# file of src/ and in total, twice: raw, then with the branches of
# PostgreSQL's macros left out (COVERAGE_MACRO_LINES); then the check of
# the targets (coverage_check).
coverage_report() {
    local info=$work/coverage.info filtered=$work/coverage-filtered.info
    local rc=(--rc lcov_branch_coverage=1)
    # lcov 2 (trixie and later) renamed the setting and checks more.
    lcov --version | grep -q 'version 1\.' ||
        rc=(--rc branch_coverage=1 --ignore-errors inconsistent,mismatch,unused,empty)
    # (below $GCOV_PREFIX, under the path the objects were built at: each
    # goes next to its .gcno, in its folder of src/)
    local built=$GCOV_PREFIX$UIDGEN_SRC/src f
    find "$built" -name '*.gcda' | while read -r f; do
        cp "$f" "$UIDGEN_SRC/src/${f#"$built"/}"
    done
    lcov -q "${rc[@]}" --capture --directory "$UIDGEN_SRC/src" --base-directory "$UIDGEN_SRC" \
        --output-file "$info.all" >/dev/null
    lcov -q "${rc[@]}" --extract "$info.all" "$UIDGEN_SRC/src/*" --output-file "$info" >/dev/null
    coverage_filter "$info" >"$filtered"
    echo "== coverage of src/ by the whole suite ($("$PG_CONFIG" --version), gcov, lcov)"
    echo "== raw: every branch gcc instruments"
    lcov "${rc[@]}" --list "$info"
    lcov "${rc[@]}" --summary "$info"
    echo "== filtered: without the branches inside PostgreSQL's macros (lines that start with one of them: $COVERAGE_MACRO_LINES)"
    lcov "${rc[@]}" --list "$filtered"
    lcov "${rc[@]}" --summary "$filtered"
    [ -z "${UIDGEN_COVERAGE_INFO:-}" ] || {
        cp "$info" "$UIDGEN_COVERAGE_INFO"
        cp "$filtered" "${UIDGEN_COVERAGE_INFO%.info}-filtered.info"
    }
    [ "$COVERAGE" != report ] || return 0
    local checked=$filtered
    if [ -n "${UIDGEN_COVERAGE_WITH:-}" ]; then
        checked=$work/coverage-merged.info
        # shellcheck disable=SC2086 # (a list of files)
        coverage_merge "$filtered" $UIDGEN_COVERAGE_WITH >"$checked"
        echo "== filtered, this run's counts added to those of: $UIDGEN_COVERAGE_WITH"
        coverage_table "$checked"
    fi
    # (below a target the run fails only with UIDGEN_COVERAGE_STRICT=1)
    coverage_check "$checked" || [ -z "${UIDGEN_COVERAGE_STRICT:-}" ]
}

status=0
leg "regress + isolation" run_installcheck "$work" 5492 || status=1
leg "doc examples" run_doctest "$work" 5494 || status=1
if [ -n "${UIDGEN_TAP_NOT_ASAN:-}" ]; then
    # (scripts/matrix.sh, on the major where scripts/sanitize.sh runs the
    # other TAP files under ASan and UBSan)
    mapfile -t tap < <(tap_files not-asan)
    echo "== TAP: only the ${#tap[@]} files scripts/sanitize.sh does not run under ASan on this major"
    leg "TAP (all files)" run_tapcheck "${tap[@]}" || status=1
else
    leg "TAP (all files)" run_tapcheck || status=1
fi

if [ -n "$COVERAGE" ]; then
    leg coverage coverage_report || status=1
    find "$UIDGEN_SRC/src" \( -name '*.gcda' -o -name '*.gcno' \) -delete
    build_and_install
fi

if [ $status -eq 0 ]; then
    echo "== all tests passed"
    rm -rf "$work"
else
    echo "== FAILED (work files kept in $work)"
fi
exit $status
