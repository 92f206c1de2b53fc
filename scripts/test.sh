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

"$UIDGEN_SRC/scripts/include_graph.sh"
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

# The filtered tracefiles $@ of the same sources, from the suites of
# different majors, added up on stdout: a line's count is the sum of its
# counts, a branch's the sum of its counts, the branches of a line matched
# by their order on it (the majors' gcc block numbers differ; the number of
# branches of a line of src/ does not, once the lines of macros are left
# out, measured on 18 and 19); files named by their path from src/, so
# that runs built in different directories add up.
coverage_merge() {
    awk -F'[:,]' '
        /^SF:/ { file = substr($0, 4); sub(/.*\/src\//, "src/", file); at = -1 }
        /^DA:/ { print file, $2, "DA", 0, $3 }
        /^BRDA:/ {
            if ($2 != at) { at = $2; n = 0 }
            print file, $2, "BR", n++, ($5 == "-" ? "-" : $5)
        }' "$@" | sort -k1,1 -k2,2n -k3,3 -k4,4n | awk '
        function flush() {
            if (file == "") return
            printf "LF:%d\nLH:%d\nBRF:%d\nBRH:%d\nend_of_record\n", lf, lh, brf, brh
        }
        function emit() {
            if (key == "") return
            split(key, k, " ")
            if (k[3] == "DA") { print "DA:" k[2] "," sum; lf++; if (sum > 0) lh++ }
            else { print "BRDA:" k[2] ",0," k[4] "," (seen ? sum : "-"); brf++; if (sum > 0) brh++ }
        }
        {
            if ($1 " " $2 " " $3 " " $4 != key) {
                emit()
                if ($1 != file) { flush(); file = $1; print "SF:" file; lf = lh = brf = brh = 0 }
                key = $1 " " $2 " " $3 " " $4; sum = 0; seen = 0
            }
            if ($5 != "-") { sum += $5; seen = 1 }
        }
        END { emit(); flush() }'
}

# Per file of tracefile $1, and in total: lines and branches covered.
coverage_table() {
    awk -F: '
        /^SF:/ { file = $2 }
        /^LF:/ { lf = $2; LF += $2 } /^LH:/ { lh = $2; LH += $2 }
        /^BRF:/ { brf = $2; BRF += $2 }
        /^BRH:/ {
            BRH += $2
            printf "%-32s lines %5.1f%% (%d of %d)  branches %5.1f%% (%d of %d)\n", file,
                100 * lh / (lf ? lf : 1), lh, lf, 100 * $2 / (brf ? brf : 1), $2, brf
        }
        END { printf "%-32s lines %5.1f%% (%d of %d)  branches %5.1f%% (%d of %d)\n", "total",
                100 * LH / LF, LH, LF, 100 * BRH / BRF, BRH, BRF }' "$1"
}

# The lines whose branches all come from a macro of PostgreSQL's, not from
# a decision of uidgen's: they start with ereport(, elog(, a spinlock's,
# CHECK_FOR_INTERRUPTS() or PG_TRY()'s parts (the never-taken side inside
# ereport, the retry of a spinlock, the interrupt check, sigsetjmp).
# coverage_filter leaves out the branches of such lines (not their lines).
# A line such as "if (x) elog(...)" does not start with one: it counts.
COVERAGE_MACRO_LINES='^[[:space:]]*(ereport|elog|SpinLockAcquire|SpinLockRelease|CHECK_FOR_INTERRUPTS|PG_TRY|PG_CATCH|PG_FINALLY|PG_END_TRY)[[:space:]]*[(]'

# Tracefile $1 without the branches of the lines that match
# COVERAGE_MACRO_LINES in their source file (named by its SF: line), on
# stdout, with each file's BRF/BRH counted again.  lcov 1's
# lcov_excl_br_line did this at capture time; lcov 2 (trixie, sid) ignores
# that setting unless told --filter branch_region (or region), so the
# tracefile is filtered here, by awk, the same whatever lcov wrote it
# (measured: the same counts as lcov 1's capture-time filter, and as lcov
# 2.0's --filter branch_region on the raw tracefile).
coverage_filter() {
    awk -v re="$COVERAGE_MACRO_LINES" '
        /^SF:/ {
            delete skip
            file = substr($0, 4); n = 0
            while ((getline line < file) > 0)
                if (line ~ re)
                    skip[++n] = 1
                else
                    n++
            close(file)
        }
        /^BRDA:/ {
            split(substr($0, 6), f, ",")
            if (f[1] in skip)
                next
            brf++
            if (f[4] != "-" && f[4] > 0)
                brh++
        }
        /^BRF:/ { print "BRF:" brf + 0; next }
        /^BRH:/ { print "BRH:" brh + 0; next }
        /^end_of_record/ { brf = brh = 0 }
        { print }' "$1"
}

# The targets, on the filtered branches: lines at least 95% and branches
# at least 85% of src/, and no file under 85% of its lines.  Below any of
# them it says which, and fails (with UIDGEN_COVERAGE_STRICT=1).
COVERAGE_MIN_LINES=95
COVERAGE_MIN_BRANCHES=85
COVERAGE_MIN_FILE_LINES=85
coverage_check() {
    awk -v lines="$COVERAGE_MIN_LINES" -v branches="$COVERAGE_MIN_BRANCHES" \
        -v file_lines="$COVERAGE_MIN_FILE_LINES" -v src="$UIDGEN_SRC/" '
        /^SF:/ { file = substr($0, 4); sub(src, "", file) }
        /^LF:/ { lf[file] += substr($0, 4); LF += substr($0, 4) }
        /^LH:/ { lh[file] += substr($0, 4); LH += substr($0, 4) }
        /^BRF:/ { BRF += substr($0, 5) }
        /^BRH:/ { BRH += substr($0, 5) }
        END {
            bad = 0
            for (f in lf)
                if (lf[f] > 0 && 100 * lh[f] < file_lines * lf[f]) {
                    printf "== coverage: %s has %.1f%% of its lines covered (target %d%%)\n", f, 100 * lh[f] / lf[f], file_lines
                    bad = 1
                }
            if (100 * LH < lines * LF) {
                printf "== coverage: lines %.1f%% (%d of %d), target %d%%\n", 100 * LH / LF, LH, LF, lines
                bad = 1
            }
            if (100 * BRH < branches * BRF) {
                printf "== coverage: branches (filtered) %.1f%% (%d of %d), target %d%%\n", 100 * BRH / BRF, BRH, BRF, branches
                bad = 1
            }
            if (!bad)
                printf "== coverage targets met: lines %.1f%%, branches (filtered) %.1f%%, every file at least %d%% of its lines\n", 100 * LH / LF, 100 * BRH / BRF, file_lines
            exit bad
        }' "$1"
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
