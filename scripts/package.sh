#!/usr/bin/env bash
# Build and install the Debian package postgresql-NN-uidgen with the
# README's own commands (its ```sh package block, run line by line: "#" as
# root, "$" as the unprivileged account; one package per installed major),
# check it with lintian, and test the one for this major the
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
# The uidgen packages installed (the README's commands install one per major).
installed_packages() {
    dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'postgresql-*-uidgen' 2>/dev/null |
        awk '$1 ~ /^.i/ { print $2 }'
}
purge_packages() {
    local pkgs
    mapfile -t pkgs < <(installed_packages)
    [ ${#pkgs[@]} -eq 0 ] || apt-get purge -y -qq "${pkgs[@]}"
}
cleanup() {
    drop_cluster
    purge_packages >/dev/null 2>&1 || true
    [ -z "$restore" ] || tar -C / -xf "$stash"
    rm -rf "$work"
}
trap cleanup EXIT

step() { echo "== package $PG_MAJOR: $*"; }

# A dev-built uidgen ("make install", scripts/test.sh) is not owned by any
# package and dpkg would silently overwrite it: set it aside for every
# installed major (the README's commands build and install a package for
# each), so that the tests see only the package's files, and put it back at
# the end.
dev_files=()
for pgc in /usr/lib/postgresql/*/bin/pg_config "$PG_CONFIG"; do
    [ -x "$pgc" ] || continue
    libdir=$("$pgc" --pkglibdir)
    sharedir=$("$pgc" --sharedir)
    for f in "$libdir/uidgen.so" "$libdir/bitcode/uidgen" "$libdir/bitcode/uidgen.index.bc" \
        "$sharedir/extension/uidgen.control" "$sharedir"/extension/uidgen--*.sql; do
        [ -e "$f" ] && dev_files+=("${f#/}")
    done
done
if [ ${#dev_files[@]} -gt 0 ]; then
    mapfile -t dev_files < <(printf '%s\n' "${dev_files[@]}" | sort -u)
    tar -C / -cf "$stash" "${dev_files[@]}"
    restore=1
    (cd / && rm -rf "${dev_files[@]}")
fi

# The README's package commands: its block marked "sh package".
readme_commands() {
    awk '/^```sh package[ \t]*$/ { inb = 1; next } inb && /^```/ { exit } inb' "$UIDGEN_SRC/README.md"
}

step "the README's package commands (its \`\`\`sh package block), in a copy of the checkout"
rsync -a --exclude .git --exclude '*.o' --exclude '*.so' --exclude '*.bc' \
    --exclude tmp_check --exclude results --exclude output_iso \
    --exclude debian/control --exclude debian/tests/control \
    "$UIDGEN_SRC/" "$work/uidgen/"
chown -R "$RUN_AS" "$work"
# Run as the README says: "#" lines as root, "$" lines as an ordinary user
# (here the unprivileged account); apt-get answers yes to its question.
printf 'APT::Get::Assume-Yes "true";\n' >"$work/apt.conf"
export APT_CONFIG=$work/apt.conf
[ -n "$(readme_commands)" ] || { echo "README.md has no \`\`\`sh package block" >&2; exit 1; }
while IFS= read -r line; do
    echo "    $line"
    case "$line" in
        '# '*) (cd "$work/uidgen" && bash -c "${line#\# }") ;;
        '$ '*) (cd "$work/uidgen" && as_user bash -c "${line#\$ }") ;;
        *) echo "README's package block: a line neither root's (#) nor the user's (\$)" >&2; false ;;
    esac >>"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
done < <(readme_commands)
unset APT_CONFIG
echo "    built and installed in $SECONDS s"
deb=$(echo "$work/${PKG}_"*.deb)
[ -f "$deb" ] || { echo "no $PKG .deb built" >&2; exit 1; }
dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q "ok installed" ||
    { echo "$PKG is not installed" >&2; exit 1; }
ls -l "$work"/*.deb | awk '{print "   ", $5, "bytes", $9}'
dpkg-deb -c "$deb" | awk '{print "    " $6}' | grep -v '/$'

step "lintian (errors fail)"
# Not as root either (lintian advises against it).
lint_status=0
as_user mkdir "$work/tmp"
runuser -u "$RUN_AS" -- env TMPDIR="$work/tmp" lintian --fail-on error --display-info "$work"/*.changes || lint_status=1
[ $lint_status -eq 0 ] || { echo "lintian reported errors" >&2; exit 1; }

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

step "apt-get purge $(installed_packages | tr '\n' ' ')"
purge_packages >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; exit 1; }
step "passed in $SECONDS s"
