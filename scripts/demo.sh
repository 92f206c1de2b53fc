#!/usr/bin/env bash
# Set up everything on a fresh Debian 12 machine and show uidgen at work:
# installs PostgreSQL 15 and the build tools if missing, builds and installs
# uidgen, starts a throwaway cluster with uidgen preloaded and
# uidgen.worker_id = 1, runs demo.sql.  Installs nothing the demo does not
# use (no test tools, no service enabled) and says how long it took.
# Run as root: ./scripts/demo.sh
source "$(dirname "$0")/common.sh"

require_root
install_packages
build_and_install
work=$(make_workdir)
trap 'stop_cluster "$work"; rm -rf "$work"' EXIT
# Leave the checkout first: the server and psql run as the unprivileged
# account, which cannot enter a checkout in root's home.
cd "$work"
# The worker ID the README's installation sets.
start_cluster "$work" 5491 "uidgen.worker_id = 1"
cp "$UIDGEN_SRC/scripts/demo.sql" "$work/"
as_user psql -X -h "$work" -p 5491 -U postgres -d postgres -v ON_ERROR_STOP=1 -f demo.sql
echo "== demo done in $SECONDS s"
