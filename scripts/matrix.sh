#!/usr/bin/env bash
# Run the whole test suite (scripts/test.sh) on every PostgreSQL major that
# Debian's archive carries: 15 on this Debian 12 host, 17 in a Debian trixie
# root, 18 and 19 (experimental) in a Debian sid root.  The roots are built
# with debootstrap on first use and kept in $UIDGEN_ROOTS (default
# /var/cache/uidgen/roots), so later runs reuse them.  A failure on any
# major fails the run.  After each major's suite, scripts/package.sh builds
# the Debian package postgresql-NN-uidgen there, lints it, installs it, runs
# the regression suite against it and removes it; a failure there fails that
# major too.  On two majors (18, where Citus runs, and 19, where pg_upgrade
# from 18 is tested, so that citus*.c and upgrade.c count;
# UIDGEN_CHECK_MAJORS to change them) the suite runs on a gcov build and
# prints the coverage of src/, and the last of them the coverage of both
# runs added up, checked against the targets (a miss fails the run when it
# has both majors; UIDGEN_COVERAGE_STRICT= to only print it); on one major (17;
# UIDGEN_SANITIZE_MAJOR) scripts/sanitize.sh runs regress and isolation
# again under ASan, UBSan and valgrind, and the TAP files under ASan and
# UBSan, while the suite there runs only the TAP files that cannot run under
# ASan (docs/testing.md, "Sanitizers, valgrind and coverage").  Before
# any major, scripts/include_graph.sh fails the run on a cycle among the
# modules or folders of src/.  Run as root:
# ./scripts/matrix.sh [major ...]
# With --bench first, runs the benchmark (bench/run.sh) instead of the tests:
#     ./scripts/matrix.sh --bench 15 18
# and with UIDGEN_BENCH=blocks only the block sequences benchmark
# (bench/blocks.sh; BENCH_SECONDS, BENCH_ROUNDS, BENCH_CPU_RUNS, BENCH_CPU_N
# and BENCH_RAW are passed on):
#     UIDGEN_BENCH=blocks BENCH_SECONDS=3 BENCH_ROUNDS=5 ./scripts/matrix.sh --bench 17
# On exit it kills the processes and unmounts what it mounted in the roots
# of the majors it ran, and leaves any other root alone (another run may be
# using it).
source "$(dirname "$0")/common.sh"

RUN=scripts/test.sh
PACKAGE=scripts/package.sh
CHECK_MAJORS=" ${UIDGEN_CHECK_MAJORS:-18 19} "
SANITIZE=scripts/sanitize.sh
SANITIZE_MAJOR=${UIDGEN_SANITIZE_MAJOR:-17}
# The benchmark's knobs, passed into the roots (whose environment is reset).
BENCH_ENV=()
if [ "${1:-}" = --bench ]; then
    RUN=bench/run.sh
    PACKAGE=
    SANITIZE=
    shift
    [ "${UIDGEN_BENCH:-}" != blocks ] || BENCH_ENV+=(BENCH_ONLY_BLOCKS=1)
    for v in BENCH_SECONDS BENCH_ROUNDS BENCH_CPU_RUNS BENCH_CPU_N BENCH_RAW; do
        [ -z "${!v:-}" ] || BENCH_ENV+=("$v=${!v}")
    done
fi

ROOTS=${UIDGEN_ROOTS:-/var/cache/uidgen/roots}
# Citus's source archives for test/t/160_citus.pl (scripts/citus.sh).
CITUS_DIR=${UIDGEN_CITUS_DIR:-$UIDGEN_SRC/../shared/citus}
# The Debian mirror this machine's apt uses (the first "deb" source of the
# main archive, one-line or deb822 format), so that the roots come from
# wherever apt reaches; UIDGEN_MIRROR overrides it.
host_mirror() {
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }'
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk 'tolower($1) == "uris:" && $2 !~ /security/ && $2 ~ /debian\/?$/ { print $2; exit }'
}
MIRROR=${UIDGEN_MIRROR:-$(host_mirror | head -n 1)}
MIRROR=${MIRROR%/}
[ -n "$MIRROR" ] || { echo "no Debian mirror in /etc/apt: set UIDGEN_MIRROR" >&2; exit 1; }
ROOTS_ONLY=
if [ "${1:-}" = --roots ]; then
    ROOTS_ONLY=1
    shift
fi
MAJORS=("$@")
[ ${#MAJORS[@]} -gt 0 ] || MAJORS=(15 17 18 19)
# Bump when a root's recipe changes, so cached roots are rebuilt.
ROOT_RECIPE=2

# The Debian suite whose root holds a major ("host" for this machine).
suite_of() {
    case $1 in
        15) echo host ;;
        17) echo trixie ;;
        18|19) echo sid ;;
        *) echo "no Debian suite carries PostgreSQL $1" >&2; return 1 ;;
    esac
}

# The majors a suite's root is built with.
majors_of() {
    case $1 in
        trixie) echo 17 ;;
        sid) echo 18 19 ;;
    esac
}

# Mount what PostgreSQL needs inside root $1.
mount_root() {
    mountpoint -q "$1/proc" || mount -t proc proc "$1/proc"
    mountpoint -q "$1/dev" || { mount --bind /dev "$1/dev" && mount --make-rslave "$1/dev"; }
    mountpoint -q "$1/dev/shm" || mount -t tmpfs -o mode=1777 tmpfs "$1/dev/shm"
}

# Unmount everything mounted below directory $1 (deepest first).
unmount_below() {
    local m
    [ -d "$1" ] || return 0
    findmnt -rn -o TARGET | { grep -F "$(realpath "$1")/" || true; } | sort -r | while read -r m; do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
}

# Build the root for suite $1 in $ROOTS/$1, unless a complete one is there.
ensure_root() {
    local suite=$1 root=$ROOTS/$1 tmp=$ROOTS/$1.new stamp majors pkgs=()
    majors=$(majors_of "$suite")
    stamp="recipe $ROOT_RECIPE; majors $majors"
    if [ "$(cat "$root/.uidgen-root" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    echo "== building the Debian $suite root for PostgreSQL $majors (cached in $root)"
    unmount_below "$tmp"
    rm -rf --one-file-system "$tmp"
    mkdir -p "$ROOTS"
    debootstrap --variant=minbase "$suite" "$tmp" "$MIRROR" >"$ROOTS/$suite.log" 2>&1 || {
        tail -n 20 "$ROOTS/$suite.log"
        return 1
    }
    # sid and experimental Release files can be past their Valid-Until date.
    echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99uidgen"
    # Packages must not start services inside the root.
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod +x "$tmp/usr/sbin/policy-rc.d"
    if [ "$suite" = sid ]; then
        echo "deb $MIRROR experimental main" >"$tmp/etc/apt/sources.list.d/experimental.list"
        # PostgreSQL 19 is only in experimental; take it and its libpq from there.
        cat >"$tmp/etc/apt/preferences.d/postgresql-19" <<'PIN'
Package: postgresql-19 postgresql-client-19 postgresql-server-dev-19 libpq-dev libpq5
Pin: release a=experimental
Pin-Priority: 500
PIN
    fi
    mkdir -p "$tmp/etc/postgresql-common"
    # No "main" cluster, but clusters made with pg_createcluster get Debian's
    # default conf.d (scripts/package.sh follows the README's steps there).
    printf "create_main_cluster = false\nadd_include_dir = 'conf.d'\n" \
        >"$tmp/etc/postgresql-common/createcluster.conf"
    cp /etc/resolv.conf "$tmp/etc/resolv.conf"
    for m in $majors; do
        pkgs+=("postgresql-$m" "postgresql-server-dev-$m")
    done
    mount_root "$tmp"
    chroot "$tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends \
               -o Dpkg::Options::=--force-confold ${TOOL_PACKAGES[*]} ${PKG_PACKAGES[*]} ${pkgs[*]}" \
        >>"$ROOTS/$suite.log" 2>&1 || {
        tail -n 20 "$ROOTS/$suite.log"
        unmount_below "$tmp"
        return 1
    }
    unmount_below "$tmp"
    echo "$stamp" >"$tmp/.uidgen-root"
    unmount_below "$root"
    rm -rf --one-file-system "$root"
    mv "$tmp" "$root"
}

# Run "$@" (the script $2 for major $1): its seconds go into the table.
timed_script() {
    local major=$1 name start=$SECONDS rc=0
    case $2 in
        */test.sh) name="suite (scripts/test.sh)" ;;
        */package.sh) name="package (scripts/package.sh)" ;;
        */sanitize.sh) name="sanitizers (scripts/sanitize.sh)" ;;
        *) name=$2 ;;
    esac
    shift 2
    "$@" || rc=$?
    leg_time "$major" "$name" $((SECONDS - start)) "$rc"
    return $rc
}

# Each leg's budget in seconds (a leg past it says so; it does not fail the
# run): $1 is the leg's name.
leg_budget() {
    case $1 in
        "root ("*) echo 600 ;;
        build*|"Citus build") echo 120 ;;
        "regress + isolation"|"doc examples"|coverage) echo 120 ;;
        "ASan: regress + isolation"|"valgrind: regress + isolation") echo 300 ;;
        "tap "*) echo 120 ;;
        "TAP (all files)") echo 600 ;;
        "ASan: TAP (all files)") echo 600 ;;
        "package "*) echo 150 ;;
        "sanitizers "*) echo 900 ;;
        "suite "*) echo 900 ;;
        *) echo 600 ;;
    esac
}

# The table of legs: one row per leg, its seconds and its budget.
print_legs() {
    local major name secs status budget
    echo "=================== legs (seconds; a leg past its budget says so)"
    printf '%-6s %-40s %6s %6s  %s\n' major leg seconds budget status
    [ -f "$UIDGEN_TIMINGS" ] || return 0
    while IFS=$'\t' read -r major name secs status; do
        budget=$(leg_budget "$name")
        [ "$secs" -le "$budget" ] || status+=", OVER BUDGET"
        printf '%-6s %-40s %6s %6s  %s\n' "$major" "$name" "$secs" "$budget" "$status"
    done <"$UIDGEN_TIMINGS"
}

# The scripts to run for major $1, in order.
scripts_of() {
    echo $RUN $PACKAGE
    [ "$1" != "$SANITIZE_MAJOR" ] || echo $SANITIZE
}

# UIDGEN_COVERAGE for major $1's suite, unless benchmarking: on the last
# of $CHECK_MAJORS this run has, 1 (the figures, the sum with the earlier
# ones' and the check of the targets); on the others "report" (the figures;
# their tracefiles go to $COVERAGE_DIR for the last one).
coverage_of() {
    local m last=
    [ -n "$PACKAGE" ] && [[ $CHECK_MAJORS == *" $1 "* ]] || return 0
    for m in "${MAJORS[@]}"; do
        [[ $CHECK_MAJORS != *" $m "* ]] || last=$m
    done
    [ "$1" = "$last" ] && echo 1 || echo report
}

# UIDGEN_COVERAGE_STRICT for the suites: 1 (a missed coverage target fails
# the run; UIDGEN_COVERAGE_STRICT= to only print it) when this run has all
# of $CHECK_MAJORS, whose sum the targets are for; else empty.
coverage_strict() {
    local m
    for m in $CHECK_MAJORS; do
        [[ " ${MAJORS[*]} " == *" $m "* ]] || return 0
    done
    echo "${UIDGEN_COVERAGE_STRICT-1}"
}

# The filtered tracefiles the earlier coverage majors left in directory $1
# (for UIDGEN_COVERAGE_WITH), the names they have in directory $2.
coverage_with() {
    local f
    for f in "$1"/*-filtered.info; do
        [ ! -e "$f" ] || printf '%s ' "$2/${f##*/}"
    done
}

# UIDGEN_TAP_NOT_ASAN for major $1's suite: 1 on $SANITIZE_MAJOR, where
# scripts/sanitize.sh runs the other TAP files under ASan and UBSan (so each
# file runs once there, not twice).
tap_not_asan_of() {
    [ "$1" != "$SANITIZE_MAJOR" ] || [ -z "$SANITIZE" ] || echo 1
}

# Run the suite and the package test (or the benchmark) for major $1 inside
# the root of suite $2.
test_in_root() {
    local major=$1 root=$ROOTS/$2 script
    mount_root "$root"
    rm -rf "$root/tmp/uidgen"
    rsync -a --exclude .git --exclude '*.o' --exclude '*.so' --exclude '*.bc' \
        --exclude tmp_check --exclude results "$UIDGEN_SRC/" "$root/tmp/uidgen/"
    # Citus's source archives (scripts/citus.sh), if there are any.
    rm -rf "$root/tmp/uidgen-citus"
    [ ! -d "$CITUS_DIR" ] || cp -r "$CITUS_DIR" "$root/tmp/uidgen-citus"
    # The root that holds 18 and 19 also tests pg_upgrade from 18 to 19.
    local from=
    [ "$major" = 19 ] && from=/usr/lib/postgresql/18
    # The coverage majors' tracefiles, in and out of the root.
    rm -rf "$root/tmp/uidgen-coverage"
    mkdir -p "$root/tmp/uidgen-coverage"
    cp "$COVERAGE_DIR"/*.info "$root/tmp/uidgen-coverage/" 2>/dev/null || true
    rm -f "$root/tmp/uidgen-legs.tsv"
    for script in $(scripts_of "$major"); do
        timed_script "$major" "$script" in_own_group chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
            LANG=C.UTF-8 HOME=/root UIDGEN_PG_MAJOR="$major" UIDGEN_UPGRADE_FROM="$from" \
            UIDGEN_TIMINGS=/tmp/uidgen-legs.tsv \
            "${BENCH_ENV[@]}" \
            UIDGEN_COVERAGE="$(coverage_of "$major")" UIDGEN_TAP_NOT_ASAN="$(tap_not_asan_of "$major")" \
            UIDGEN_COVERAGE_INFO="/tmp/uidgen-coverage/$major.info" \
            UIDGEN_COVERAGE_WITH="$(coverage_with "$COVERAGE_DIR" /tmp/uidgen-coverage)" \
            UIDGEN_COVERAGE_STRICT="$(coverage_strict)" \
            UIDGEN_CITUS_DIR=/tmp/uidgen-citus \
            "/tmp/uidgen/$script" || { cat "$root/tmp/uidgen-legs.tsv" >>"$UIDGEN_TIMINGS"; return 1; }
    done
    cat "$root/tmp/uidgen-legs.tsv" >>"$UIDGEN_TIMINGS"
    cp "$root/tmp/uidgen-coverage/$major"*.info "$COVERAGE_DIR/" 2>/dev/null || true
}

# The same for major $1 on this machine.
test_on_host() {
    local script
    for script in $(scripts_of "$1"); do
        timed_script "$1" "$script" in_own_group env UIDGEN_PG_MAJOR="$1" UIDGEN_COVERAGE="$(coverage_of "$1")" \
            UIDGEN_COVERAGE_INFO="$COVERAGE_DIR/$1.info" \
            UIDGEN_COVERAGE_WITH="$(coverage_with "$COVERAGE_DIR" "$COVERAGE_DIR")" \
            UIDGEN_COVERAGE_STRICT="$(coverage_strict)" \
            UIDGEN_TAP_NOT_ASAN="$(tap_not_asan_of "$1")" "${BENCH_ENV[@]}" \
            "$UIDGEN_SRC/$script" || return
    done
}

require_root
# Run a command in a process group of its own, for at most $MAJOR_TIMEOUT
# seconds, and wait for it, so that a signal to this script stops the whole
# run at once (see cleanup).
MAJOR_TIMEOUT=${UIDGEN_MAJOR_TIMEOUT:-2100}
child=
in_own_group() {
    local rc=0
    setsid timeout --kill-after=30 "$MAJOR_TIMEOUT" "$@" &
    child=$!
    wait "$child" || rc=$?
    child=
    [ "$rc" -ne 124 ] || echo "== timed out after $MAJOR_TIMEOUT s"
    return "$rc"
}

# The roots this run uses (those of its majors), never another's.
used_roots() {
    local major suite
    for major in "${MAJORS[@]}"; do
        suite=$(suite_of "$major" 2>/dev/null) || continue
        [ "$suite" = host ] || printf '%s\n' "$ROOTS/$suite" "$ROOTS/$suite.new"
    done | sort -u
}

# Kill every process still running inside root $1 (servers the tests
# started detach from the suite's process group).
kill_in_root() {
    local p root
    root=$(realpath "$1" 2>/dev/null) || return 0
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/root" 2>/dev/null)" in
            "$root"|"$root"/*) kill -KILL "${p#/proc/}" 2>/dev/null || true ;;
        esac
    done
}

# On any exit: stop what still runs of the suite, then unmount what it
# mounted, in the roots it used only.
cleanup() {
    local root
    if [ -n "$child" ]; then
        kill -TERM -- "-$child" 2>/dev/null || true
        sleep 2
    fi
    for root in "${root_job[@]}"; do
        pkill -KILL -P "$root" 2>/dev/null || true
    done
    for root in $(used_roots); do
        kill_in_root "$root"
        unmount_below "$root"
    done
}

# The background jobs that build the roots, per suite, and their status.
declare -A root_job=() root_rc=()
# The tracefiles of the coverage majors' runs (coverage_of).
COVERAGE_DIR=$(mktemp -d /tmp/uidgen-coverage.XXXXXX)
# The table of legs (common.sh's leg_time), and what the root jobs print.
TIMINGS_DIR=$(mktemp -d /tmp/uidgen-legs.XXXXXX)
export UIDGEN_TIMINGS=$TIMINGS_DIR/legs.tsv
trap 'cleanup; rm -rf "$COVERAGE_DIR" "$TIMINGS_DIR"' EXIT
trap 'exit 130' INT TERM
command -v debootstrap >/dev/null && command -v rsync >/dev/null || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends debootstrap rsync >/dev/null
}

# A cycle in src/'s include graph fails the run before any major.
"$UIDGEN_SRC/scripts/include_graph.sh"

# Each root this run needs is built (or found cached) by a job of its own
# started now, so that debootstrap and apt, which wait on the network and
# the disk more than on the CPU, overlap the host's suite; a major waits
# for its own root's job only.
for suite in $(for m in "${MAJORS[@]}"; do suite_of "$m"; done | sort -u); do
    [ "$suite" != host ] || continue
    ( start=$SECONDS; ensure_root "$suite" && rc=0 || rc=$?
      leg_time "$([ "$suite" = trixie ] && echo 17 || echo 18/19)" "root ($suite)" \
          $((SECONDS - start)) "$rc" ) >"$TIMINGS_DIR/root-$suite.out" 2>&1 &
    root_job[$suite]=$!
    echo "== the Debian $suite root: job $! (log $ROOTS/$suite.log)"
done

# Wait for the job of the root of suite $1 (once: 18 and 19 share one);
# print what it said.
wait_root() {
    if [ -z "${root_rc[$1]:-}" ]; then
        root_rc[$1]=0
        wait "${root_job[$1]}" || root_rc[$1]=$?
        cat "$TIMINGS_DIR/root-$1.out"
    fi
    return "${root_rc[$1]}"
}

if [ -n "$ROOTS_ONLY" ]; then
    for suite in "${!root_job[@]}"; do wait_root "$suite" || failed_roots=1; done
    print_legs
    exit ${failed_roots:-0}
fi

declare -A result
failed=0
for major in "${MAJORS[@]}"; do
    suite=$(suite_of "$major")
    start=$SECONDS
    echo "=================== PostgreSQL $major ($suite)"
    if [ "$suite" = host ]; then
        test_on_host "$major" && rc=0 || rc=$?
    else
        { wait_root "$suite" && test_in_root "$major" "$suite"; } && rc=0 || rc=$?
        unmount_below "$ROOTS/$suite"
    fi
    [ "$rc" -eq 0 ] && result[$major]=passed || { result[$major]=FAILED; failed=1; }
    result[$major]+=" in $((SECONDS - start)) s"
done

print_legs
echo "=================== matrix"
for major in "${MAJORS[@]}"; do
    echo "PostgreSQL $major: ${result[$major]}"
done
echo "whole run: $SECONDS s"
exit $failed
