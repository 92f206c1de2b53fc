# shellcheck shell=bash
# The coverage figures of src/ that scripts/test.sh prints on a gcov build
# and that scripts/matrix.sh checks over the coverage majors' runs added up:
# the filter of PostgreSQL's macro branches, the sum of tracefiles of
# different majors, the table per file and the check of the targets.
# Sourced, not run; uses UIDGEN_SRC (scripts/common.sh).

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

