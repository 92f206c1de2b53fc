#!/usr/bin/env bash
# Run the whole test suite (scripts/test.sh) on every PostgreSQL major that
# Debian's archive carries: 15 on this Debian 12 host, 17 in a Debian trixie
# root, 18 and 19 (experimental) in Debian sid roots, one root per major
# (the root of 19 also holds 18, for the pg_upgrade test).  The roots are
# built with debootstrap, each by a job of its own started first, and kept
# in $UIDGEN_ROOTS (default /var/cache/uidgen/roots), so later runs reuse
# them.  The majors run side by side in lanes (UIDGEN_LANES, default
# "15,19 17 18": 15 then 19 in one lane, 17 and 18 in one each; "serial"
# for one after the other): most of a suite's time is spent waiting for
# servers, clocks and leases, and the two cores have room for three.  Each
# major's output is printed whole when it ends.  A failure on any major
# fails the run.  After each major's suite, scripts/package.sh builds
# the Debian package postgresql-NN-uidgen there, lints it, installs it, runs
# the regression suite against it and removes it; a failure there fails that
# major too.  On two majors (18, where Citus runs, and 19, where pg_upgrade
# from 18 is tested, so that citus*.c and upgrade.c count;
# UIDGEN_CHECK_MAJORS to change them) the suite runs on a gcov build and
# prints the coverage of src/; once every lane has ended, the coverage of
# both runs added up is checked against the targets (a miss fails the run
# when it has both majors; UIDGEN_COVERAGE_STRICT= to only print it); on one
# major (17; UIDGEN_SANITIZE_MAJOR) scripts/sanitize.sh runs regress and
# isolation again under ASan, UBSan and valgrind, and the TAP files under
# ASan and UBSan, while the suite there runs only the TAP files that cannot
# run under ASan (docs/testing.md, "Sanitizers, valgrind and coverage");
# on one (18, the shortest lane; UIDGEN_MUTANTS_MAJOR) scripts/mutants.sh checks that the
# suite catches each of a few planted bugs.
# The TAP tests of all lanes reserve their ports in one directory, bound
# into every root (PG_TEST_PORT_DIR; UIDGEN_PORT_DIR to share one with test
# runs beside this one), so that no two servers take the same TCP port.  Before any major, scripts/include_graph.sh fails the run on a
# cycle among the modules or folders of src/.  It ends with a table of
# legs: the seconds of each (roots, builds, regress + isolation, doc
# examples, each TAP file, coverage, sanitizers, valgrind, package) against
# its budget.  Run as root:
# ./scripts/matrix.sh [major ...]
# With --roots first, it only builds the roots of the majors given.
# With --stress first, runs scripts/stress.sh after each major's suite
# (STRESS_SECONDS and STRESS_LOAD are passed on):
#     STRESS_SECONDS=1200 ./scripts/matrix.sh --stress 17 19
# With --bench first, runs the benchmark (bench/run.sh) instead of the
# tests, one major after the other:
#     ./scripts/matrix.sh --bench 15 18
# and with UIDGEN_BENCH=blocks only the block sequences benchmark
# (bench/blocks.sh; BENCH_SECONDS, BENCH_ROUNDS, BENCH_CPU_RUNS, BENCH_CPU_N
# and BENCH_RAW are passed on):
#     UIDGEN_BENCH=blocks BENCH_SECONDS=3 BENCH_ROUNDS=5 ./scripts/matrix.sh --bench 17
# On exit it kills the processes and unmounts what it mounted in the roots
# of the majors it ran, and leaves any other root alone (another run may be
# using it).
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/coverage.sh"

RUN=scripts/test.sh
PACKAGE=scripts/package.sh
LANES=${UIDGEN_LANES:-15,19 17 18}
CHECK_MAJORS=" ${UIDGEN_CHECK_MAJORS:-18 19} "
SANITIZE=scripts/sanitize.sh
SANITIZE_MAJOR=${UIDGEN_SANITIZE_MAJOR:-17}
# The planted bugs (scripts/mutants.sh) run on this major, after its package.
MUTANTS_MAJOR=${UIDGEN_MUTANTS_MAJOR:-18}
# The benchmark's knobs, passed into the roots (whose environment is reset).
BENCH_ENV=()
if [ "${1:-}" = --stress ]; then
    # the flake hunt (scripts/stress.sh) on each major, after its suite
    # installed a test build there; STRESS_* passed on
    RUN="scripts/test.sh scripts/stress.sh"
    PACKAGE=
    SANITIZE=
    shift
    for v in STRESS_SECONDS STRESS_LOAD; do
        [ -z "${!v+x}" ] || BENCH_ENV+=("$v=${!v}")
    done
elif [ "${1:-}" = --bench ]; then
    RUN=bench/run.sh
    PACKAGE=
    SANITIZE=
    # (figures measured with nothing else running)
    LANES=serial
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
ROOT_RECIPE=3

# The Debian suite whose root holds a major ("host" for this machine).
suite_of() {
    case $1 in
        15) echo host ;;
        17) echo trixie ;;
        18|19) echo sid ;;
        *) echo "no Debian suite carries PostgreSQL $1" >&2; return 1 ;;
    esac
}

# The majors the root of major $1 is built with (19's holds 18 too, for
# the pg_upgrade test).
majors_of() {
    case $1 in
        19) echo 18 19 ;;
        *) echo "$1" ;;
    esac
}

# The root of major $1.
root_of() {
    echo "$ROOTS/pg$1"
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

# Build the root of major $1, unless a complete one is there.
ensure_root() {
    local suite root tmp stamp majors pkgs=() log
    suite=$(suite_of "$1")
    root=$(root_of "$1")
    tmp=$root.new
    log=$root.log
    majors=$(majors_of "$1")
    stamp="recipe $ROOT_RECIPE; $suite; majors $majors"
    if [ "$(cat "$root/.uidgen-root" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    echo "== building the Debian $suite root for PostgreSQL $majors (cached in $root)"
    unmount_below "$tmp"
    rm -rf --one-file-system "$tmp"
    mkdir -p "$ROOTS"
    debootstrap --variant=minbase "$suite" "$tmp" "$MIRROR" >"$log" 2>&1 || {
        tail -n 20 "$log"
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
        >>"$log" 2>&1 || {
        tail -n 20 "$log"
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
        */mutants.sh) name="planted bugs (scripts/mutants.sh)" ;;
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
    # (measured in lanes, three majors at once on 2 cores, plus a quarter)
    case $1 in
        "root ("*) echo 600 ;;
        build*) echo 120 ;;
        "Citus build") echo 300 ;;
        "regress + isolation"|"doc examples"|coverage) echo 120 ;;
        "ASan: regress + isolation") echo 120 ;;
        "valgrind: regress + isolation") echo 400 ;;
        "tap "*) echo 120 ;;
        "TAP (all files)"|"ASan: TAP (all files)") echo 900 ;;
        "package "*) echo 200 ;;
        "planted bugs "*) echo 300 ;;
        "sanitizers "*|"suite "*) echo 1200 ;;
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
    [ "$1" != "$MUTANTS_MAJOR" ] || [ -z "$PACKAGE" ] || echo scripts/mutants.sh
}

# UIDGEN_COVERAGE for major $1's suite, unless benchmarking: "report" on
# $CHECK_MAJORS (the figures, and its filtered tracefile kept in
# $COVERAGE_DIR for check_coverage at the end).
coverage_of() {
    [ -n "$PACKAGE" ] && [[ $CHECK_MAJORS == *" $1 "* ]] || return 0
    echo report
}

# After every lane: the coverage majors' filtered tracefiles added up,
# their table and the check of the targets (coverage.sh), if this run has
# every one of $CHECK_MAJORS, whose sum the targets are for.  A miss fails
# (UIDGEN_COVERAGE_STRICT= to only print it).
check_coverage() {
    local m files=()
    for m in $CHECK_MAJORS; do
        [ -f "$COVERAGE_DIR/$m-filtered.info" ] || {
            echo "== coverage: no tracefile of $m in this run, no check of the targets"
            return 0
        }
        files+=("$COVERAGE_DIR/$m-filtered.info")
    done
    echo "=================== coverage of src/, the runs of$CHECK_MAJORS added up (filtered)"
    coverage_merge "${files[@]}" >"$COVERAGE_DIR/merged.info"
    coverage_table "$COVERAGE_DIR/merged.info"
    coverage_check "$COVERAGE_DIR/merged.info" || [ -z "${UIDGEN_COVERAGE_STRICT-1}" ]
}

# UIDGEN_TAP_NOT_ASAN for major $1's suite: 1 on $SANITIZE_MAJOR, where
# scripts/sanitize.sh runs the other TAP files under ASan and UBSan (so each
# file runs once there, not twice).
tap_not_asan_of() {
    [ "$1" != "$SANITIZE_MAJOR" ] || [ -z "$SANITIZE" ] || echo 1
}

# The environment every major's scripts get (beside UIDGEN_PG_MAJOR):
# major $1's coverage and TAP selection, the shared port lock directory.
major_env() {
    echo UIDGEN_COVERAGE="$(coverage_of "$1")" UIDGEN_TAP_NOT_ASAN="$(tap_not_asan_of "$1")" \
        PG_TEST_PORT_DIR="$PORT_DIR"
}

# Run the suite and the package test (or the benchmark) for major $1 inside
# its root.
test_in_root() {
    local major=$1 root script from=
    root=$(root_of "$1")
    mount_root "$root"
    mountpoint -q "$root$PORT_DIR" || { mkdir -p "$root$PORT_DIR" && mount --bind "$PORT_DIR" "$root$PORT_DIR"; }
    rm -rf "$root/tmp/uidgen"
    rsync -a --exclude .git --exclude '*.o' --exclude '*.so' --exclude '*.bc' \
        --exclude tmp_check --exclude results "$UIDGEN_SRC/" "$root/tmp/uidgen/"
    # Citus's source archives (scripts/citus.sh), if there are any.
    rm -rf "$root/tmp/uidgen-citus"
    [ ! -d "$CITUS_DIR" ] || cp -r "$CITUS_DIR" "$root/tmp/uidgen-citus"
    # The root of 19 also tests pg_upgrade from 18 to 19.
    [ "$major" = 19 ] && from=/usr/lib/postgresql/18
    rm -rf "$root/tmp/uidgen-coverage"
    mkdir -p "$root/tmp/uidgen-coverage"
    rm -f "$root/tmp/uidgen-legs.tsv"
    for script in $(scripts_of "$major"); do
        # shellcheck disable=SC2046 # (major_env's words)
        timed_script "$major" "$script" in_own_group chroot "$root" /usr/bin/env -i \
            PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
            UIDGEN_PG_MAJOR="$major" UIDGEN_UPGRADE_FROM="$from" $(major_env "$major") \
            UIDGEN_TIMINGS=/tmp/uidgen-legs.tsv UIDGEN_COVERAGE_INFO="/tmp/uidgen-coverage/$major.info" \
            UIDGEN_CITUS_DIR=/tmp/uidgen-citus "${BENCH_ENV[@]}" \
            "/tmp/uidgen/$script" || { cat "$root/tmp/uidgen-legs.tsv" >>"$UIDGEN_TIMINGS"; return 1; }
    done
    cat "$root/tmp/uidgen-legs.tsv" >>"$UIDGEN_TIMINGS"
    cp "$root/tmp/uidgen-coverage/$major"*.info "$COVERAGE_DIR/" 2>/dev/null || true
}

# The same for major $1 on this machine.
test_on_host() {
    local script
    for script in $(scripts_of "$1"); do
        # shellcheck disable=SC2046 # (major_env's words)
        timed_script "$1" "$script" in_own_group env UIDGEN_PG_MAJOR="$1" $(major_env "$1") \
            UIDGEN_COVERAGE_INFO="$COVERAGE_DIR/$1.info" "${BENCH_ENV[@]}" \
            "$UIDGEN_SRC/$script" || return
    done
}

# Run a command in a process group of its own, for at most $MAJOR_TIMEOUT
# seconds, and wait for it, so that a signal to this script stops the whole
# run at once (see cleanup).
MAJOR_TIMEOUT=${UIDGEN_MAJOR_TIMEOUT:-2100}
in_own_group() {
    local rc=0 child
    setsid timeout --kill-after=30 "$MAJOR_TIMEOUT" "$@" &
    child=$!
    echo "$child" >"$TIMINGS_DIR/group-$child"
    wait "$child" || rc=$?
    rm -f "$TIMINGS_DIR/group-$child"
    [ "$rc" -ne 124 ] || echo "== timed out after $MAJOR_TIMEOUT s"
    return "$rc"
}

# The roots this run uses (those of its majors), never another's.
used_roots() {
    local major root
    for major in "${MAJORS[@]}"; do
        [ "$(suite_of "$major" 2>/dev/null)" != host ] || continue
        root=$(root_of "$major")
        printf '%s\n' "$root" "$root.new"
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

# On any exit: stop what still runs of the lanes and the root jobs, then
# unmount what they mounted, in the roots this run used only.
cleanup() {
    local f pid
    for f in "$TIMINGS_DIR"/group-*; do
        [ -e "$f" ] || continue
        kill -TERM -- "-$(cat "$f")" 2>/dev/null || true
    done
    for pid in "${jobs_started[@]}"; do
        pkill -KILL -P "$pid" 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
    done
    [ ${#jobs_started[@]} -eq 0 ] || sleep 2
    for f in $(used_roots); do
        kill_in_root "$f"
        unmount_below "$f"
    done
    rm -rf "$COVERAGE_DIR" "$TIMINGS_DIR"
    [ -z "${own_port_dir:-}" ] || rm -rf "$PORT_DIR"
}

require_root
# The background jobs (roots, lanes), killed on exit.
jobs_started=()
# The tracefiles of the coverage majors' runs (coverage_of).
COVERAGE_DIR=$(mktemp -d /tmp/uidgen-coverage.XXXXXX)
# The table of legs (common.sh's leg_time), what the jobs print, their
# status and the process groups of the scripts under way.
TIMINGS_DIR=$(mktemp -d /tmp/uidgen-legs.XXXXXX)
export UIDGEN_TIMINGS=$TIMINGS_DIR/legs.tsv
# The TAP tests' port reservations, shared by every lane (the same path in
# every root, where test_in_root binds it): a lock file per port taken.
# UIDGEN_PORT_DIR names one to share with test runs beside this one.
PORT_DIR=${UIDGEN_PORT_DIR:-}
[ -n "$PORT_DIR" ] || { PORT_DIR=$(mktemp -d /tmp/uidgen-ports.XXXXXX) && own_port_dir=1; }
mkdir -p "$PORT_DIR"
chmod 1777 "$PORT_DIR"
trap cleanup EXIT
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
# for its own root only (wait_root).
for major in "${MAJORS[@]}"; do
    [ "$(suite_of "$major")" != host ] || continue
    ( start=$SECONDS; ensure_root "$major" && rc=0 || rc=$?
      leg_time "$major" "root ($(suite_of "$major"))" $((SECONDS - start)) "$rc"
      echo "$rc" >"$TIMINGS_DIR/root-$major.rc" ) >"$TIMINGS_DIR/root-$major.out" 2>&1 &
    jobs_started+=($!)
    echo "== the root of PostgreSQL $major: job $! (log $(root_of "$major").log)"
done

# Wait until the root of major $1 is built; print what its job said.
wait_root() {
    while [ ! -f "$TIMINGS_DIR/root-$1.rc" ]; do
        sleep 1
    done
    cat "$TIMINGS_DIR/root-$1.out"
    return "$(cat "$TIMINGS_DIR/root-$1.rc")"
}

if [ -n "$ROOTS_ONLY" ]; then
    failed=0
    for major in "${MAJORS[@]}"; do
        [ "$(suite_of "$major")" = host ] || wait_root "$major" || failed=1
    done
    print_legs
    exit $failed
fi

# Run major $1 (its root first): its output into its log, printed whole at
# its end (under a lock, so that lanes ending together do not mix), and
# its outcome into $TIMINGS_DIR/result-$1.
run_major() {
    local major=$1 start=$SECONDS rc log=$TIMINGS_DIR/major-$1.log
    {
        echo "=================== PostgreSQL $major ($(suite_of "$major"))"
        if [ "$(suite_of "$major")" = host ]; then
            test_on_host "$major" && rc=0 || rc=$?
        else
            { wait_root "$major" && test_in_root "$major"; } && rc=0 || rc=$?
            unmount_below "$(root_of "$major")"
        fi
        echo "=================== PostgreSQL $major: $([ "$rc" -eq 0 ] && echo passed || echo FAILED)"
    } >"$log" 2>&1
    echo "$([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s" \
        >"$TIMINGS_DIR/result-$major"
    flock "$TIMINGS_DIR/print.lock" cat "$log"
}

# The lanes: UIDGEN_LANES's lists of majors, kept to the majors of this
# run; a major in none has a lane of its own.
lanes=()
if [ "$LANES" = serial ]; then
    lanes=("${MAJORS[*]}")
else
    placed=" "
    for lane in $LANES; do
        mine=()
        for major in ${lane//,/ }; do
            [[ " ${MAJORS[*]} " != *" $major "* ]] || mine+=("$major")
        done
        [ ${#mine[@]} -eq 0 ] || { lanes+=("${mine[*]}"); placed+="${mine[*]} "; }
    done
    for major in "${MAJORS[@]}"; do
        [[ $placed == *" $major "* ]] || lanes+=("$major")
    done
fi
echo "== lanes, side by side: $(printf '[%s] ' "${lanes[@]}")"
lane_pids=()
for lane in "${lanes[@]}"; do
    ( for major in $lane; do run_major "$major"; done ) &
    lane_pids+=($!)
    jobs_started+=($!)
done
for pid in "${lane_pids[@]}"; do
    wait "$pid" || true
done

failed=0
for major in "${MAJORS[@]}"; do
    grep -q '^passed' "$TIMINGS_DIR/result-$major" 2>/dev/null || failed=1
done
if [ -z "$PACKAGE" ]; then
    :
elif ! check_coverage; then
    failed=1
fi
print_legs
echo "=================== matrix"
for major in "${MAJORS[@]}"; do
    echo "PostgreSQL $major: $(cat "$TIMINGS_DIR/result-$major" 2>/dev/null || echo 'did not run')"
done
echo "whole run: $SECONDS s"
exit $failed
