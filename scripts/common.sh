# shellcheck shell=bash
# Shared set-up for demo.sh and test.sh: install what is missing, build,
# install, and helpers to run a throwaway cluster as an unprivileged user.
# Sourced, not run.

set -euo pipefail

UIDGEN_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# The PostgreSQL major to build and test against: Debian's packages of it,
# or, with UIDGEN_PG_CONFIG, a PostgreSQL installed some other way (then only
# the build and test tools are installed from Debian's archive).
PG_MAJOR=${UIDGEN_PG_MAJOR:-15}
PG_CONFIG=${UIDGEN_PG_CONFIG:-/usr/lib/postgresql/$PG_MAJOR/bin/pg_config}
PG_BIN=$(dirname "$PG_CONFIG")
# PostgreSQL refuses to run as root; servers and tests run as this account.
RUN_AS=${UIDGEN_RUN_AS:-postgres}
# What building uidgen needs (demo.sh installs only these and PostgreSQL).
BUILD_PACKAGES=(make gcc libc6-dev)
# What test.sh needs besides: the TAP tests' IPC::Run, libfaketime, rsync
# for the test copy, and the ORMs test/t/170_orm_recipes.pl runs the recipes
# of docs/orms.md with (SQLAlchemy, Django, psycopg2; in bookworm, trixie
# and sid).
TEST_PACKAGES=(libipc-run-perl faketime libfaketime rsync python3-sqlalchemy python3-django python3-psycopg2)
# patroni and etcd-server, for test.sh only: test/t/130_patroni.pl runs its
# own etcd and Patronis on free ports above 49152; install_packages neither
# starts nor enables their services.  python3-etcd is named because patroni
# depends on it or on another store's client, and apt without recommends may
# pick the other (trixie, sid).
PATRONI_PACKAGES=(patroni python3-etcd etcd-server)
TOOL_PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${PATRONI_PACKAGES[@]}")
# What scripts/package.sh needs besides: the Debian package's build
# dependencies (debian/control.in), dpkg-buildpackage, lintian, and rsync
# for its copy of the checkout.
PKG_PACKAGES=(build-essential debhelper dpkg-dev fakeroot lintian postgresql-server-dev-all rsync)
PACKAGES=("${BUILD_PACKAGES[@]}")
[ -n "${UIDGEN_PG_CONFIG:-}" ] ||
    PACKAGES+=(postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR)

# apt-get install the packages given, printing each package as it is set up.
apt_install() {
    apt-get install -y -q --no-install-recommends "$@" |
        sed -un 's/^Setting up \([^ :]*\).*/   set up \1/p'
}

# Install the Debian packages that are missing (needs root), printing each
# package as it is set up.  Those of PATRONI_PACKAGES come last, with no
# service of theirs started nor left enabled.
install_packages() {
    local missing=() services=() policy=/usr/sbin/policy-rc.d added='' rc=0 p unit
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" && continue
        if printf '%s\n' "${PATRONI_PACKAGES[@]}" | grep -qxF "$p"; then
            services+=("$p")
        else
            missing+=("$p")
        fi
    done
    local all=("${missing[@]}" "${services[@]}")
    [ ${#all[@]} -eq 0 ] && return 0
    echo "== installing from Debian's archive: ${all[*]} (and what they depend on)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
    [ ${#services[@]} -gt 0 ] || return 0
    # policy-rc.d: Debian's way to keep maintainer scripts from starting services.
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        added=1
    fi
    apt_install "${services[@]}" || rc=$?
    [ -z "$added" ] || rm -f "$policy"
    # Their postinst enables the services they ship: undo that, with
    # systemctl where there is one, else by removing the links it would.
    local units=()
    mapfile -t units < <(for p in "${services[@]}"; do dpkg-query -L "$p"; done 2>/dev/null |
        sed -n 's|.*/systemd/system/\([^/@]*\.service\)$|\1|p')
    for unit in "${units[@]}"; do
        if command -v systemctl >/dev/null; then
            systemctl disable --quiet "$unit" || rc=1
        else
            rm -f /etc/systemd/system/*.wants/"$unit"
        fi
    done
    return $rc
}

# Build and install the extension into the directories of the PostgreSQL
# whose pg_config is $1 (default: the one under test); more arguments are
# make variables for the build (COPT="-O0 --coverage", say); needs root.
build_and_install() {
    local pg_config=${1:-$PG_CONFIG}
    [ $# -eq 0 ] || shift
    echo "== building uidgen for $("$pg_config" --version)${*:+ with $*}"
    make -C "$UIDGEN_SRC" -s PG_CONFIG="$pg_config" "$@" clean
    find "$UIDGEN_SRC/src" \( -name '*.gcno' -o -name '*.gcda' \) -delete
    make -C "$UIDGEN_SRC" -s PG_CONFIG="$pg_config" "$@"
    make -C "$UIDGEN_SRC" -s PG_CONFIG="$pg_config" "$@" install
}

# Run a command as the unprivileged account, in the current directory.
as_user() {
    if [ "$(id -un)" = "$RUN_AS" ]; then
        "$@"
    else
        runuser -u "$RUN_AS" -- env PATH="$PG_BIN:$PATH" "$@"
    fi
}

# A working directory the unprivileged account owns.
make_workdir() {
    local dir
    dir=$(mktemp -d /tmp/uidgen.XXXXXX)
    chown "$RUN_AS" "$dir"
    echo "$dir"
}

# Copy the checkout into $1 for the unprivileged account: the tests write
# results next to the sources.
copy_for_tests() {
    rsync -a --exclude .git --exclude '*.o' --exclude '*.so' --exclude '*.bc' \
        --exclude '*.gcno' --exclude '*.gcda' --exclude tmp_check --exclude results \
        "$UIDGEN_SRC/" "$1/"
    chown -R "$RUN_AS" "$1"
}

# Make $1 a directory of the PostgreSQL programs under test whose postgres
# wrapper runs the shell text $2 with the real postgres and its arguments
# appended ("exec valgrind ...", say), except for initdb's bootstrap,
# single-user and settings checks and the version checks.  Copies, not
# links: pg_ctl and initdb look for postgres next to their own resolved path.
wrap_postgres() {
    local dir=$1 run=$2
    mkdir -p "$dir"
    cp -p "$PG_BIN"/* "$dir/"
    cat >"$dir/postgres" <<WRAPPER
#!/bin/bash
case "\$1" in
    --boot|--single|--check|-V|--version|-C|--describe-config) exec "$PG_BIN/postgres" "\$@" ;;
esac
$run "$PG_BIN/postgres" "\$@"
WRAPPER
    chmod 755 "$dir/postgres"
}

# Start a cluster in $1 on port $2 with uidgen preloaded (uidgen.worker_id
# 0), listening only on
# a Unix socket in $1; more postgresql.conf lines may follow as arguments.
# Run it from a directory the unprivileged account can enter (e.g. $1).
start_cluster() {
    local dir=$1 port=$2
    shift 2
    as_user "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    cat >>"$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'uidgen'
uidgen.worker_id = 0
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
max_prepared_transactions = 10
CONF
    [ $# -eq 0 ] || printf '%s\n' "$@" >>"$dir/data/postgresql.conf"
    as_user "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}

# pg_regress and the isolation specs (make installcheck) on a cluster of
# their own in $1 on port $2, from the test copy in the current directory;
# prints the diffs on failure.
run_installcheck() {
    local dir=$1 port=$2 rc=0
    echo "== make installcheck (pg_regress and isolation)"
    start_cluster "$dir" "$port"
    as_user make -s PG_CONFIG="$PG_CONFIG" PGHOST="$dir" PGPORT="$port" PGUSER=postgres \
        installcheck || rc=1
    [ $rc -eq 0 ] || find . -name regression.diffs -exec cat {} +
    stop_cluster "$dir"
    return $rc
}

# The docs' SQL examples (scripts/doctest.sh: every `sql` block of README.md
# and docs/*.md, and the output shown after it) on a cluster of their own in
# $1/doc on port $2 with uidgen.worker_id = 1, from the test copy in the
# current directory.
run_doctest() {
    local dir=$1/doc port=$2 rc=0
    echo "== doc examples (scripts/doctest.sh)"
    mkdir -p "$dir"
    chown "$RUN_AS" "$dir"
    start_cluster "$dir" "$port" "uidgen.worker_id = 1"
    as_user env PGHOST="$dir" PGPORT="$port" PGUSER=postgres ./scripts/doctest.sh || rc=1
    stop_cluster "$dir"
    return $rc
}

# TAP files scripts/sanitize.sh leaves out under ASan, beside those that
# use libfaketime (libfaketime and libasan deadlock at process start) and
# those that run Citus (not built with the sanitizers: its own code is not
# under test there): 110 upgrades from another major, 130 runs Patroni and
# etcd (both need more than that job's one major).
TAP_SKIP_ASAN=(test/t/110_pg_upgrade.pl test/t/130_patroni.pl)

# The TAP files of the test copy in the current directory that run under
# ASan ($1 = asan; on stderr, why the others do not), or those that do not
# ($1 = not-asan): scripts/sanitize.sh runs the first set, and scripts/test.sh
# on the sanitizer's major (UIDGEN_TAP_NOT_ASAN=1) the second, so that
# between them every file runs once there.
tap_files() {
    local f asan
    for f in test/t/*.pl; do
        asan=1
        if printf '%s\n' "${TAP_SKIP_ASAN[@]}" | grep -qxF "$f"; then
            asan="skipped under ASan: $f (see TAP_SKIP_ASAN in scripts/common.sh)"
        elif grep -qE 'start_faked|faketime|FAKETIME' "$f"; then
            asan="skipped under ASan: $f (libfaketime, which deadlocks with libasan)"
        elif grep -qE 'citus_(available|node|cluster)\(' "$f"; then
            asan="skipped under ASan: $f (Citus)"
        fi
        if [ "$1" = asan ]; then
            [ "$asan" = 1 ] && echo "$f" || echo "   $asan" >&2
        else
            [ "$asan" = 1 ] || echo "$f"
        fi
    done
}

# Run "$@" with umask 0 if the TAP tests share a port lock directory
# (PG_TEST_PORT_DIR, scripts/matrix.sh): the lock files one lane's
# "postgres" writes must be writable by another root's, whose uid differs.
tap_umask() {
    (
        [ -z "${PG_TEST_PORT_DIR:-}" ] || umask 000
        "$@"
    )
}

# The TAP tests given as arguments (default: all) from the test copy in the
# current directory, with the programs of $PG_BIN first in PATH, two files
# at a time (UIDGEN_TAP_JOBS: most of a file's time is spent waiting for
# servers, leases and clocks, and each file has its own nodes and ports;
# measured on 15: 60 files in 670 s, where one at a time 56 took about
# 1,040 s); on failure,
# prints the tail of the log of each test that failed, and of its servers'
# logs (the logs of the tests that passed would push it out of view).
run_tapcheck() {
    local tests="$*" f name which=() rc
    [ -z "$tests" ] || which=(PROVE_TESTS="$tests")
    echo "== make tapcheck (TAP${tests:+: $tests})"
    # (pipefail: the status is make's)
    tap_umask as_user make -s PG_CONFIG="$PG_CONFIG" bindir="$PG_BIN" \
        PROVE_FLAGS="--timer -j${UIDGEN_TAP_JOBS:-2}" "${which[@]}" tapcheck 2>&1 | tee prove.out && rc=0 || rc=1
    tap_legs prove.out "${TAP_LEG:-tap}"
    [ $rc -ne 0 ] || return 0
    # (prove's summary names each failed file at the start of a line)
    sed -n '/^Test Summary Report/,$p' prove.out | grep -o '^test/t/[^ ]*\.pl' | sort -u |
        while read -r f; do
            name=$(basename "$f" .pl)
            echo "---- tmp_check/log/regress_log_$name (tail)"
            tail -n 80 "tmp_check/log/regress_log_$name" 2>/dev/null
            for f in tmp_check/log/"${name}"_*.log; do
                [ -f "$f" ] && { echo "---- $f (tail)"; tail -n 30 "$f"; }
            done
        done
    return 1
}

# Stop the cluster in $1.
stop_cluster() {
    [ -f "$1/data/postmaster.pid" ] || return 0
    as_user "$PG_BIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null || true
}

# Require root, for apt-get and make install.
require_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "run this as root (it installs packages and the extension)" >&2
        exit 1
    fi
}

# Append a row to the run's table of legs (the file $UIDGEN_TIMINGS, which
# scripts/matrix.sh prints at its end): major $1, leg $2, seconds $3, exit
# status $4.
leg_time() {
    [ -n "${UIDGEN_TIMINGS:-}" ] || return 0
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$([ "$4" = 0 ] && echo passed || echo FAILED)" \
        >>"$UIDGEN_TIMINGS"
}

# Run "$@" as leg $1 of this major's run: its seconds go into the table.
leg() {
    local name=$1 start=$SECONDS rc=0
    shift
    "$@" || rc=$?
    leg_time "$PG_MAJOR" "$name" $((SECONDS - start)) "$rc"
    return $rc
}

# A row per TAP file of prove's output $1 (--timer): its milliseconds, as
# seconds, and whether it passed; $2 names the run (tap, tap asan).
tap_legs() {
    local f ms ok
    [ -n "${UIDGEN_TIMINGS:-}" ] || return 0
    sed -nE 's/^\[[0-9:]+\] (test\/t\/[^ ]+\.pl) \.+ ((ok|skipped)[^0-9]*([0-9]+ ms)?)?.*/\1 \3 \4/p' "$1" |
        while read -r f ok ms; do
            ms=${ms% ms}
            [ -n "$ok" ] && ok=0 || ok=1
            leg_time "$PG_MAJOR" "$2 $(basename "$f" .pl)" "$(( (${ms:-0} + 500) / 1000 ))" "$ok"
        done
}
