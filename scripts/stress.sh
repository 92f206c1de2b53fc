#!/usr/bin/env bash
# The flake hunt: run the suite over and over, in random order, with the
# machine loaded by stress-ng (Debian's package), and count each test's
# failures.  A round is: pg_regress and the isolation specs (make
# installcheck, each test counted by name), then every TAP file, shuffled,
# UIDGEN_TAP_JOBS at a time (as CI runs them).  Rounds follow each other
# until STRESS_SECONDS (default 2700) have passed; a round under way is
# finished.  It prints one line per round (what failed), then a table: per
# test, its runs and failures, and exits non-zero if anything failed.  The
# logs of a failed run are kept in the work directory it names.
# STRESS_LOAD is stress-ng's arguments (default: both cores busy at 60%
# each and one disk writer), empty for no load.  Run as root, with a test
# build installed (scripts/test.sh leaves one):
#     ./scripts/stress.sh                        (15 on the host)
#     STRESS_SECONDS=600 ./scripts/stress.sh test/t/118_blocks_period.pl test/t/111_blocks_prefetch_review.pl
#     ./scripts/matrix.sh --stress 17 19         (in the Debian roots)
# With TAP files as arguments, a round runs only those (and no regress).
source "$(dirname "$0")/common.sh"

require_root
PACKAGES+=("${TEST_PACKAGES[@]}" "${PATRONI_PACKAGES[@]}" stress-ng)
install_packages
SECONDS_WANTED=${STRESS_SECONDS:-2700}
LOAD=${STRESS_LOAD---cpu 2 --cpu-load 60 --hdd 1 --hdd-bytes 256M}

work=$(make_workdir)
copy_for_tests "$work/src"
cd "$work/src"
load_pid=
cleanup() {
    [ -z "$load_pid" ] || kill "$load_pid" 2>/dev/null || true
    stop_cluster "$work"
}
trap cleanup EXIT
if [ -n "$LOAD" ]; then
    # (in the work directory: its --hdd files go there)
    # shellcheck disable=SC2086 # (stress-ng's arguments)
    (cd "$work" && exec stress-ng $LOAD --timeout 0 --quiet) &
    load_pid=$!
fi

declare -A runs=() fails=()
# Count test $1 as run, failed if $2 is not 0; true if it passed.
record() {
    runs[$1]=$(( ${runs[$1]:-0} + 1 ))
    [ "$2" = 0 ] && return 0
    fails[$1]=$(( ${fails[$1]:-0} + 1 ))
    return 1
}

# pg_regress and the isolation specs on a cluster of their own; each test
# by name from their output (15's "name ... ok", 16's "ok N - name").
regress_round() {
    local out=$work/regress.out name result
    run_installcheck "$work" 5496 >"$out" 2>&1 || true
    sed -nE 's/^(test )? *([a-z0-9_]+) +\.\.\. +(ok|FAILED|failed).*/\2 \3/p;
             s/^(ok|not ok) +[0-9]+ +[-+]? *([a-z0-9_]+) .*/\2 \1/p' "$out" |
        while read -r name result; do
            case $result in ok) echo "regress $name 0" ;; *) echo "regress $name 1" ;; esac
        done
}

# The TAP files $@, shuffled, UIDGEN_TAP_JOBS at a time; each file by name.
tap_round() {
    local list
    list=$(printf '%s\n' "$@" | shuf | tr '\n' ' ')
    rm -rf tmp_check
    tap_umask as_user make -s PG_CONFIG="$PG_CONFIG" bindir="$PG_BIN" \
        PROVE_FLAGS="--timer -j${UIDGEN_TAP_JOBS:-2}" PROVE_TESTS="$list" tapcheck >prove.out 2>&1 || true
    sed -nE 's/^\[[0-9:]+\] (test\/t\/[^ ]+\.pl) \.+ (ok|skipped)?.*/\1 \2/p' prove.out |
        while read -r f ok; do
            [ -n "$ok" ] && echo "tap $(basename "$f" .pl) 0" || echo "tap $(basename "$f" .pl) 1"
        done
}

if [ $# -gt 0 ]; then
    tap=("$@")
    with_regress=
else
    mapfile -t tap < <(ls test/t/*.pl)
    with_regress=1
fi
echo "== stress: ${#tap[@]} TAP files${with_regress:+ and regress + isolation}, rounds for $SECONDS_WANTED s, load: ${LOAD:-none} ($("$PG_CONFIG" --version))"
round=0
SECONDS=0
while [ "$SECONDS" -lt "$SECONDS_WANTED" ]; do
    round=$((round + 1))
    start=$SECONDS
    failed=()
    while read -r kind name rc; do
        record "$kind $name" "$rc" || failed+=("$kind $name")
    done < <([ -z "$with_regress" ] || regress_round; tap_round "${tap[@]}")
    if [ ${#failed[@]} -gt 0 ]; then
        keep=$work/failed-round-$round
        mkdir -p "$keep"
        cp -r tmp_check/log "$keep/" 2>/dev/null || true
        cp prove.out "$work"/regress.out "$keep/" 2>/dev/null || true
        find . -name regression.diffs -exec cp {} "$keep/" \; 2>/dev/null || true
    fi
    echo "== round $round: $((SECONDS - start)) s, failed: ${failed[*]:-nothing}"
done

total_runs=0
total_fails=0
echo "== stress: $round rounds in $SECONDS s ($("$PG_CONFIG" --version), load: ${LOAD:-none})"
printf '%-44s %5s %8s\n' test runs failures
while IFS= read -r t; do
    [ -n "$t" ] || continue
    printf '%-44s %5s %8s\n' "$t" "${runs[$t]}" "${fails[$t]:-0}"
    total_runs=$((total_runs + ${runs[$t]}))
    total_fails=$((total_fails + ${fails[$t]:-0}))
done < <(printf '%s\n' "${!runs[@]}" | sort)
echo "== stress: $total_runs runs, $total_fails failures$([ "$total_fails" -eq 0 ] || echo " (logs in $work/failed-round-*)")"
trap - EXIT
cleanup
[ "$total_fails" -eq 0 ] && rm -rf "$work"
[ "$total_fails" -eq 0 ]
