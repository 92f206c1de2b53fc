#!/usr/bin/env bash
# uidgen under AddressSanitizer, UndefinedBehaviorSanitizer and valgrind's
# memcheck, on one PostgreSQL major (scripts/matrix.sh runs it on 17).
#  1. Builds uidgen (with its crash points) with -fsanitize=address,undefined
#     -fno-sanitize-recover=all -fno-wrapv (PostgreSQL's -fwrapv would hide
#     signed overflow), runs every server with libasan preloaded (a postgres
#     wrapper in a bindir of its own, which TAP restarts go through too), and
#     runs make installcheck (pg_regress and isolation) and the TAP tests but
#     those below.  Any sanitizer report that names uidgen (its uidgen.so or
#     its sources), in the sanitizers' log files or the servers' logs, fails.
#  2. Runs make installcheck with the server under valgrind memcheck
#     (--trace-children=yes, test/valgrind.supp for PostgreSQL's own noise);
#     an error with a frame in uidgen.so fails, the others are counted.
#  The ordinary test build (scripts/test.sh's) stays installed at the end.
# Run as root, like scripts/test.sh: ./scripts/sanitize.sh (UIDGEN_PG_MAJOR
# or UIDGEN_PG_CONFIG pick the PostgreSQL, as in scripts/common.sh).
source "$(dirname "$0")/common.sh"

require_root
PACKAGES+=("${TEST_PACKAGES[@]}" valgrind)
install_packages
REAL_BIN=$PG_BIN
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-wrapv -fno-omit-frame-pointer"
work=$(make_workdir)
trap 'stop_cluster "$work"; stop_cluster "$work/valgrind"' EXIT
copy_for_tests "$work/src"
cd "$work/src"

# Print the sanitizer reports in the files given that name uidgen (its
# shared library or one of its sources); true if there is one.
uidgen_reports() {
    local names f found=1 report='ERROR: AddressSanitizer|runtime error:'
    names=$(cd "$UIDGEN_SRC/src" && ls -- */*.[ch] | sed 's/\.[ch]$//' | sort -u | paste -sd '|')
    for f in "$@"; do
        [ -f "$f" ] && grep -qE "$report" "$f" || continue
        grep -E -A40 "$report" "$f" |
            grep -qE "uidgen\.so|(^|[^[:alnum:]/_.-])src/($names)\.[ch]:[0-9]+" || continue
        echo "---- $f"
        grep -E -A40 "$report" "$f"
        found=0
    done
    return $found
}

start=$SECONDS
echo "== ASan and UBSan"
build_and_install "$PG_CONFIG" UIDGEN_CRASH_POINTS=1 COPT="$SANITIZE"
libasan=$($("$PG_CONFIG" --cc) -print-file-name=libasan.so)
mkdir -p "$work/asan"
chown "$RUN_AS" "$work/asan"
# PostgreSQL frees little before exit (leaks are its design); report to
# files as well as stderr (the server log), frames with their module.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$work/asan/asan:stack_trace_format='    #%n %p %F %L %M'"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$work/asan/ubsan"
# argv[0] stays the wrapper's path, so that postmaster.opts (pg_ctl restart)
# names the wrapper.
wrap_postgres "$work/asan-bin" \
    "export LD_PRELOAD=\"$libasan\${LD_PRELOAD:+ \$LD_PRELOAD}\"; exec -a \"\$0\""
PG_BIN=$work/asan-bin
status=0
leg "ASan: regress + isolation" run_installcheck "$work" 5494 || status=1
mapfile -t tap < <(tap_files asan)
TAP_LEG="tap ASan" leg "ASan: TAP (all files)" run_tapcheck "${tap[@]}" || status=1
unset ASAN_OPTIONS UBSAN_OPTIONS
PG_BIN=$REAL_BIN
logs=("$work"/asan/* "$work/server.log" tmp_check/log/*.log)
if uidgen_reports "${logs[@]}"; then
    echo "== ASan/UBSan reported errors in uidgen (above)"
    status=1
else
    echo "== ASan/UBSan: no report names uidgen" \
        "($(cat "${logs[@]}" 2>/dev/null | grep -cE 'ERROR: AddressSanitizer|runtime error:') reports in all)"
fi
echo "== ASan and UBSan took $((SECONDS - start)) s"

start=$SECONDS
echo "== valgrind memcheck"
# The ordinary test build, which stays installed afterwards.
build_and_install "$PG_CONFIG" UIDGEN_CRASH_POINTS=1
vg=$work/valgrind
mkdir -p "$vg/xml"
chown -R "$RUN_AS" "$vg"
wrap_postgres "$vg/bin" "exec valgrind --quiet --trace-children=yes --error-limit=no \
--leak-check=no --show-leak-kinds=none --num-callers=40 --suppressions=$work/src/test/valgrind.supp \
--xml=yes --xml-file=$vg/xml/%p.xml"
PG_BIN=$vg/bin
leg "valgrind: regress + isolation" run_installcheck "$vg" 5495 || status=1
PG_BIN=$REAL_BIN
# Each error is an <error> element, its frames <obj>s.
errors=$(cat "$vg"/xml/*.xml | grep -c '<kind>' || true)
if ! compgen -G "$vg/xml/*.xml" >/dev/null; then
    echo "== valgrind: no report written (did the server run under valgrind?)"
    status=1
elif cat "$vg"/xml/*.xml | awk '/<error>/ { e = ""; keep = 0 } { e = e $0 "\n" }
        /<obj>.*uidgen\.so<\/obj>/ { keep = 1 } /<\/error>/ && keep { printf "%s", e; found = 1 }
        END { exit !found }'; then
    echo "== valgrind: errors with frames in uidgen.so (above; $errors errors in all)"
    status=1
else
    echo "== valgrind: no error in uidgen.so ($errors unsuppressed, in PostgreSQL's own code)"
fi
echo "== valgrind took $((SECONDS - start)) s"

if [ $status -eq 0 ]; then
    echo "== sanitizers and valgrind passed"
    rm -rf "$work"
else
    echo "== FAILED (work files kept in $work)"
fi
exit $status
