#!/usr/bin/env bash
# The Cluster Toolkit blueprints (blueprints/): shape, module sources, variables, referenced files,
# the image step installing exactly what scripts/install-node.sh installs, and the node prerequisites
# scripts (blueprints/files/). No cluster needed.
set -uo pipefail
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${GPUDIRECT_BUILD_DIR:-$SRC/build/release}
[ -f "$BUILD/plugin/spank_gpudirect.so" ] || { echo "no plugin in $BUILD: build first"; exit 1; }
python3 -c 'import yaml' 2>/dev/null || { echo "python3-yaml is missing: scripts/install-deps.sh installs it"; exit 1; }
exec python3 "$SRC/tests/blueprints/check_blueprints.py" "$SRC" "$BUILD"
