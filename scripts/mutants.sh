#!/usr/bin/env bash
# Planted bugs: one-line mutations of src/, each of which the suite must
# catch.  For each mutant (MUTANTS below: a name, a file, the line as it is,
# the line as the mutant has it, and the tests that must fail), it copies
# the checkout, plants the bug in the copy, builds and installs that copy
# as a test build, and runs those tests ("regress" is make installcheck on
# a throwaway cluster; the others are TAP files), which must FAIL.  A
# mutant whose line is not found exactly once fails the script (the list
# keeps up with the code), as does one that no test catches.  At the end
# it reinstalls the checkout's own test build.  It prints a line per
# mutant and exits non-zero unless every one was caught.  It installs into
# the PostgreSQL under test: run it where no other test runs.  Run as root:
#     ./scripts/mutants.sh              (UIDGEN_PG_MAJOR / UIDGEN_PG_CONFIG as for test.sh)
#     ./scripts/mutants.sh stale-refill (only the mutants named)
# scripts/matrix.sh runs it on one major (UIDGEN_MUTANTS_MAJOR, 18).
source "$(dirname "$0")/common.sh"

# name@file@line as it is (a fixed string)@line in the mutant@tests that must fail
MUTANTS=(
    "stale-refill@src/blocks/allocworker.c@*nworks = blockcache_drop_stale(works, *nworks);@(void) 0;@test/t/111_blocks_prefetch_review.pl"
    "period-window-off@src/blocks/blockcache.c@if (now < e->period_start || now >= e->period_end)@if (now < e->period_start && now >= e->period_end)@test/t/118_blocks_period.pl"
    "reset-skip-cleared@src/blocks/allocsql.c@\" period = \$4, reset_skip = CASE WHEN period\"@\" period = \$4, reset_skip = 0 * CASE WHEN period\"@regress"
    "same-tick-twice@src/clock/clock.c@next = (Max(now, last + 1) + granule - 1)@next = (Max(now, last) + granule - 1)@test/t/080_concurrency.pl"
    "short-promotion-skip@src/blocks/failover.c@skip = uidgen_promotion_skip;@skip = uidgen_promotion_skip / 1000;@test/t/108_blocks_promotion_skip.pl"
)

require_root
PACKAGES+=("${TEST_PACKAGES[@]}")
install_packages
export UIDGEN_CRASH_POINTS=1
work=$(make_workdir)
# (the checkout's own test build again, whatever happens)
trap 'build_and_install >/dev/null 2>&1 || echo "== could not reinstall the test build" >&2; rm -rf "$work"' EXIT

# Plant mutant $2 (a MUTANTS line) in the copy $1: the line replaced,
# which must be there exactly once.
plant() {
    local copy=$1 file old new
    IFS=@ read -r _ file old new _ <<<"$2"
    MUT_OLD=$old MUT_NEW=$new perl -0pi -e '
        my $n = () = /\Q$ENV{MUT_OLD}\E/g;
        die "found $n times\n" if $n != 1;
        s/\Q$ENV{MUT_OLD}\E/$ENV{MUT_NEW}/;' "$copy/$file"
}

# Run the tests $@ against the installed build from the copy in the
# current directory; true if they all pass.
run_tests() {
    local t taps=() ok=0
    for t in "$@"; do
        if [ "$t" = regress ]; then
            run_installcheck "$PWD" 5497 >"$work/regress.log" 2>&1 || ok=1
        else
            taps+=("$t")
        fi
    done
    [ ${#taps[@]} -eq 0 ] || as_user make -s PG_CONFIG="$PG_CONFIG" bindir="$PG_BIN" \
        PROVE_TESTS="${taps[*]}" tapcheck >"$work/tap.log" 2>&1 || ok=1
    return $ok
}

status=0
for m in "${MUTANTS[@]}"; do
    IFS=@ read -r name _ _ _ tests <<<"$m"
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF "$name"; then
        continue
    fi
    start=$SECONDS
    copy=$work/$name
    rm -rf "$copy"
    mkdir -p "$copy"
    copy_for_tests "$copy"
    if ! err=$(plant "$copy" "$m" 2>&1); then
        echo "== mutant $name: its line is not in the code ($err): update MUTANTS"
        status=1
        continue
    fi
    (UIDGEN_SRC=$copy build_and_install >"$work/build.log" 2>&1) || {
        echo "== mutant $name: does not build"; tail -n 20 "$work/build.log"; status=1; continue; }
    # shellcheck disable=SC2086 # (a list of tests)
    if (cd "$copy" && run_tests $tests); then
        echo "== mutant $name: NOT CAUGHT by $tests ($((SECONDS - start)) s)"
        status=1
    else
        echo "== mutant $name: caught by $tests ($((SECONDS - start)) s)"
    fi
    stop_cluster "$copy"
done
[ $status -eq 0 ] && echo "== every mutant was caught" || echo "== FAILED: a mutant was not caught or not planted"
exit $status
