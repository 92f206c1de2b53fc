#!/usr/bin/env bash
# Set up everything on a fresh Debian 12 machine and run the whole test
# suite: pg_regress and isolation specs (make installcheck) against a
# throwaway cluster with uidgen preloaded, then the TAP tests (make
# tapcheck), all as the unprivileged "postgres" account.  Exits non-zero on
# any failure.  Run as root: ./scripts/test.sh
# UIDGEN_PG_MAJOR picks another of Debian's PostgreSQL majors (default 15),
# UIDGEN_PG_CONFIG a PostgreSQL installed some other way (scripts/common.sh).
source "$(dirname "$0")/common.sh"

require_root
install_packages
# A test build: uidgen's crash points (src/crashpoint.h) are compiled in.
export UIDGEN_CRASH_POINTS=1
# The pg_upgrade test (test/t/110_pg_upgrade.pl) upgrades from the older
# major installed in $UIDGEN_UPGRADE_FROM, which needs uidgen too.
[ -z "${UIDGEN_UPGRADE_FROM:-}" ] || build_and_install "$UIDGEN_UPGRADE_FROM/bin/pg_config"
build_and_install

work=$(make_workdir)
trap 'stop_cluster "$work"' EXIT
# The tests write results next to the sources: give them a copy they own.
rsync -a --exclude .git --exclude '*.o' --exclude '*.so' --exclude '*.bc' \
    "$UIDGEN_SRC/" "$work/src/"
chown -R "$RUN_AS" "$work/src"
cd "$work/src"

status=0
echo "== make installcheck (pg_regress and isolation)"
start_cluster "$work" 5492
if ! as_user make -s PG_CONFIG="$PG_CONFIG" PGHOST="$work" PGPORT=5492 PGUSER=postgres installcheck; then
    status=1
    find . -name regression.diffs -exec cat {} +
fi
stop_cluster "$work"

echo "== make tapcheck (TAP)"
if ! as_user make -s PG_CONFIG="$PG_CONFIG" PROVE_FLAGS="--timer" tapcheck; then
    status=1
    for f in tmp_check/log/regress_log_*; do
        [ -f "$f" ] && { echo "---- $f (tail)"; tail -n 60 "$f"; }
    done
fi

if [ $status -eq 0 ]; then
    echo "== all tests passed"
    rm -rf "$work"
else
    echo "== FAILED (work files kept in $work)"
fi
exit $status
