#!/bin/sh
# SPDX-License-Identifier: MIT
# Serves Knot's bundled site (apps/knot/site) on a free port of 127.0.0.1
# and prints the URL; Ctrl-C stops it. Uses build/apps/knot/knot (on
# Capriccio) when it was built, else knot-pthreads.
#   apps/knot/run-demo.sh [BUILD_DIR]      (default: build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build}
for bin in "$build/apps/knot/knot" "$build/apps/knot/knot-pthreads"; do
    [ -x "$bin" ] && break
done
if [ ! -x "$bin" ]; then
    echo "run-demo: no Knot binary in $build/apps/knot; build first (make build)" >&2
    exit 1
fi
# Knot prints one ready line with the port it got; show it as a URL.
exec "$bin" --root "$here/site" --addr 127.0.0.1 --port 0 |
    sed -u -e 's|.* at \(http://[^ ]*\)$|Knot ('"$(basename "$bin")"') is serving the demo site at \1  (Ctrl-C stops it)|'
