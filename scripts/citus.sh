#!/usr/bin/env bash
# Build and install Citus (not in Debian's archive) for the PostgreSQL under
# test, from a source archive in $UIDGEN_CITUS_DIR (default: ../shared/citus
# beside the checkout), for the Citus TAP test (test/t/160_citus.pl).  Picks
# the archive whose release supports the major: citus-13.0.5 for 15 and 16,
# citus-14.0.1 for 17 and 18 (on 16 it needs 16.5 or later); 19 has no Citus
# release yet.  Without a suitable archive it says why and exits 0: the test
# then skips, saying so.  Skips the build when that Citus is already
# installed.  Run as root (it installs Citus's build dependencies from
# Debian's archive):
#     ./scripts/citus.sh        (UIDGEN_PG_MAJOR / UIDGEN_PG_CONFIG as for test.sh)
source "$(dirname "$0")/common.sh"

require_root
CITUS_DIR=${UIDGEN_CITUS_DIR:-$UIDGEN_SRC/../shared/citus}
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
# (14.0.1 on 18 calls libcurl even when configured --without-libcurl:
# citus.so then fails to load, so it is built with it.)
case $major in
    15|16) release=13.0.5 curl=--without-libcurl ;;
    17|18) release=14.0.1 curl=--with-libcurl ;;
    *) echo "== Citus: no release supports PostgreSQL $major yet; its test will skip"; exit 0 ;;
esac
archive=$CITUS_DIR/citus-$release.tar.gz
if [ ! -f "$archive" ]; then
    echo "== Citus: no $archive (UIDGEN_CITUS_DIR); its test will skip"
    exit 0
fi
if [ "$(cat "$("$PG_CONFIG" --pkglibdir)/citus.uidgen-build" 2>/dev/null)" = "$release" ]; then
    echo "== Citus $release already installed for PostgreSQL $major"
    exit 0
fi

start=$SECONDS
# Citus's build dependencies (14.0.1 wants ICU, and curl for the reason
# above).
PACKAGES=(liblz4-dev libzstd-dev libkrb5-dev libssl-dev libicu-dev libcurl4-openssl-dev)
install_packages
work=$(mktemp -d /tmp/uidgen-citus.XXXXXX)
trap 'rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work"
cd "$work/citus-$release"
echo "== building Citus $release for $("$PG_CONFIG" --version)"
./configure -q PG_CONFIG="$PG_CONFIG" "$curl" >"$work/build.log" 2>&1 &&
    make -s -j2 >>"$work/build.log" 2>&1 && make -s install >>"$work/build.log" 2>&1 || {
    tail -n 30 "$work/build.log"
    echo "== Citus $release did not build"
    exit 1
}
echo "$release" >"$("$PG_CONFIG" --pkglibdir)/citus.uidgen-build"
echo "== Citus $release installed in $((SECONDS - start)) s"
