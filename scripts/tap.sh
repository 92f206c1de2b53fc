#!/usr/bin/env bash
# Developer helper: run some TAP tests as the unprivileged account against
# the installed extension, e.g.  ./scripts/tap.sh test/t/010_restart.pl
# (build and "make install" first).  Run as root.
source "$(dirname "$0")/common.sh"

require_root
work=$(make_workdir)
copy_for_tests "$work/src"
cd "$work/src"
tests="$*"
as_user make -s PG_CONFIG="$PG_CONFIG" PROVE_FLAGS="--timer ${PROVE_FLAGS:-}" \
    PROVE_TESTS="${tests:-test/t/*.pl}" tapcheck || {
    echo "logs kept in $work/src/tmp_check/log" >&2
    exit 1
}
rm -rf "$work"
