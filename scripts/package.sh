#!/usr/bin/env bash
# Build the Debian package postgresql-NN-uidgen for one PostgreSQL major
# (debian/, pg_buildext), check it with lintian, install it, and test it the
# way the README's "Installing the package" section says: a cluster of the
# packaged PostgreSQL with uidgen added to shared_preload_libraries in its
# conf.d, restarted with pg_ctlcluster, CREATE EXTENSION as postgres, then
# "make installcheck" as postgres against it; then the package's autopkgtest
# (debian/tests/installcheck).  Removes the package and the cluster again and
# puts back a dev-built uidgen ("make install") it found, so the machine is
# left as it was.  Exits non-zero on any failure.
# Run as root: ./scripts/package.sh [major]   (default $UIDGEN_PG_MAJOR, 15)
# scripts/matrix.sh runs it after each major's suite.
[ -z "${1:-}" ] || export UIDGEN_PG_MAJOR=$1
source "$(dirname "$0")/common.sh"

PACKAGES+=("${PKG_PACKAGES[@]}")
PKG=postgresql-$PG_MAJOR-uidgen
CLUSTER=uidgen_pkg           # its own cluster: the packaged "main" one is left alone
PORT=${UIDGEN_PKG_PORT:-5493}
SOCKDIR=/var/run/postgresql

require_root
install_packages
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

work=$(mktemp -d /tmp/uidgen-pkg.XXXXXX)
chmod 755 "$work"
# Out of the checkout, which the unprivileged account may not enter (root's home).
cd "$work"
stash=$work/dev-built.tar
restore=
etc_existed=
[ ! -d "/etc/postgresql/$PG_MAJOR" ] || etc_existed=1
drop_cluster() {
    pg_dropcluster --stop "$PG_MAJOR" "$CLUSTER" 2>/dev/null || true
    # pg_dropcluster leaves the conf.d file we added.
    rm -rf "/etc/postgresql/$PG_MAJOR/$CLUSTER"
    [ -n "$etc_existed" ] || rmdir "/etc/postgresql/$PG_MAJOR" 2>/dev/null || true
}
cleanup() {
    drop_cluster
    if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q installed; then
        apt-get purge -y -qq "$PKG" >/dev/null 2>&1 || true
    fi
    [ -z "$restore" ] || tar -C / -xf "$stash"
    rm -rf "$work"
}
trap cleanup EXIT

step() { echo "== package $PG_MAJOR: $*"; }

step "building $PKG with dpkg-buildpackage and pg_buildext"
rsync -a --exclude .git --exclude '*.o' --exclude '*.so' --exclude '*.bc' \
    --exclude tmp_check --exclude results --exclude output_iso \
    "$UIDGEN_SRC/" "$work/uidgen/"
# As the README says: as an ordinary user (here the unprivileged account),
# for this major only (debian/pgversions says which majors the package
# supports, PG_SUPPORTED_VERSIONS which of them to build here); the suite
# runs against the installed package below, not at build time.
chown -R "$RUN_AS" "$work"
(
    # (set -e does not reach into a list followed by ||: chain with &&)
    cd "$work/uidgen" &&
    as_user env PG_SUPPORTED_VERSIONS="$PG_MAJOR" pg_buildext updatecontrol >/dev/null &&
    as_user env PG_SUPPORTED_VERSIONS="$PG_MAJOR" DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
        DEB_BUILD_PROFILES=nocheck dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1
) || { tail -n 40 "$work/build.log"; exit 1; }
deb=$(echo "$work/${PKG}_"*.deb)
[ -f "$deb" ] || { echo "no $PKG .deb built" >&2; exit 1; }
ls -l "$work"/*.deb | awk '{print "   ", $5, "bytes", $9}'
dpkg-deb -c "$deb" | awk '{print "    " $6}' | grep -v '/$'

step "lintian (errors fail)"
# Not as root either (lintian advises against it).
lint_status=0
as_user mkdir "$work/tmp"
runuser -u "$RUN_AS" -- env TMPDIR="$work/tmp" lintian --fail-on error --display-info "$work"/*.changes || lint_status=1
[ $lint_status -eq 0 ] || { echo "lintian reported errors" >&2; exit 1; }

# A dev-built uidgen ("make install", scripts/test.sh) is not owned by any
# package and dpkg would silently overwrite it: set it aside, so that the
# tests see only the package's files, and put it back at the end.
libdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)
dev_files=()
for f in "$libdir/uidgen.so" "$libdir/bitcode/uidgen" "$libdir/bitcode/uidgen.index.bc" \
    "$sharedir/extension/uidgen.control" "$sharedir"/extension/uidgen--*.sql; do
    [ -e "$f" ] && dev_files+=("${f#/}")
done
if [ ${#dev_files[@]} -gt 0 ]; then
    tar -C / -cf "$stash" "${dev_files[@]}"
    restore=1
    (cd / && rm -rf "${dev_files[@]}")
fi

step "apt-get install ./$(basename "$deb")"
apt-get install -y -qq --no-install-recommends "$deb" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; exit 1; }

# The README's steps, on a cluster of our own instead of "main".
step "the README's steps: cluster $PG_MAJOR/$CLUSTER, uidgen preloaded, restart, CREATE EXTENSION"
pg_createcluster "$PG_MAJOR" "$CLUSTER" -p "$PORT" -o "listen_addresses=" \
    -o "unix_socket_directories=$SOCKDIR" --start >/dev/null
conf=$(runuser -u postgres -- psql -X -At -p "$PORT" -c 'SHOW config_file')
[ "$conf" = "/etc/postgresql/$PG_MAJOR/$CLUSTER/postgresql.conf" ] ||
    { echo "unexpected config_file $conf" >&2; exit 1; }
preloaded=$(runuser -u postgres -- psql -X -At -p "$PORT" -c 'SHOW shared_preload_libraries')
cat >"/etc/postgresql/$PG_MAJOR/$CLUSTER/conf.d/uidgen.conf" <<CONF
shared_preload_libraries = '${preloaded:+$preloaded,}uidgen'
uidgen.worker_id = 1
CONF
pg_ctlcluster "$PG_MAJOR" "$CLUSTER" restart
runuser -u postgres -- psql -X -At -p "$PORT" -c 'SHOW shared_preload_libraries' 
runuser -u postgres -- psql -X -p "$PORT" -v ON_ERROR_STOP=1 -At <<'SQL'
CREATE EXTENSION uidgen;
SELECT 'worker ' || snowflake_worker(snowflake_next()) || ', uidgen ' || extversion
FROM pg_extension WHERE extname = 'uidgen';
DROP EXTENSION uidgen;
SQL

step "make installcheck as postgres against $PG_MAJOR/$CLUSTER (PGHOST=$SOCKDIR PGPORT=$PORT)"
cp -a "$work/uidgen" "$work/check"
chown -R "$RUN_AS" "$work/check"
(
    cd "$work/check"
    as_user make -s PG_CONFIG="$PG_CONFIG" PGHOST="$SOCKDIR" PGPORT="$PORT" installcheck ||
        { find . -name regression.diffs -exec cat {} +; exit 1; }
)
drop_cluster

step "autopkgtest: debian/tests/installcheck (pg_buildext installcheck, pg_virtualenv)"
rm -rf "$work/check" && cp -a "$work/uidgen" "$work/check" && chown -R "$RUN_AS" "$work/check"
(
    cd "$work/check"
    as_user debian/tests/installcheck >"$work/autopkgtest.log" 2>&1 ||
        { cat "$work/autopkgtest.log"; exit 1; }
    grep -E '^### |tests passed' "$work/autopkgtest.log"
)

step "apt-get purge $PKG"
apt-get purge -y -qq "$PKG" >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; exit 1; }
step "passed in $SECONDS s"
