#!/bin/bash
# Image-build step of the blueprints (a startup-script runner in the Packer image build): fetches
# gpudirect-slurm, builds it against the image's own Slurm (slurm-gcp installs Slurm from source
# under /usr/local, so its spank.h is /usr/local/include/slurm/spank.h), and installs it with
# scripts/install-node.sh, the same script an admin runs by hand: the image gets exactly what that
# script installs. Every argument after `--` goes to install-node.sh (the plugstack line).
#
# Usage: install-gpudirect-slurm.sh [--repo URL --ref REF | --source DIR] [--build-dir DIR]
#                                   [--no-deps] [--no-build] -- INSTALL_NODE_ARGS...
set -euo pipefail

repo="" ref="" source_dir="" build_dir="" deps=1 build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) repo=$2; shift 2 ;;
    --ref) ref=$2; shift 2 ;;
    --source) source_dir=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --no-deps) deps=0; shift ;;
    --no-build) build=0; shift ;;
    --) shift; break ;;
    *) echo "install-gpudirect-slurm: error: unknown option '$1' (see the usage at the top of $0)" >&2; exit 1 ;;
  esac
done

if [ "$deps" = 1 ]; then
  # Build dependencies only: Slurm itself is the image's (never Debian's/Ubuntu's libslurm-dev,
  # whose version would not match the slurmd the plugin runs in).
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends git ca-certificates build-essential cmake ninja-build \
    pkg-config libhwloc-dev libfabric-dev libxml2-dev libcli11-dev nlohmann-json3-dev
fi

if [ -z "$source_dir" ]; then
  [ -n "$repo" ] && [ -n "$ref" ] || { echo "install-gpudirect-slurm: error: give --repo URL --ref REF, or --source DIR" >&2; exit 1; }
  source_dir=/opt/gpudirect-slurm/src
  rm -rf "$source_dir"
  git clone --depth 1 --branch "$ref" "$repo" "$source_dir"
fi
[ -n "$build_dir" ] || build_dir=$source_dir/build/release

if [ "$build" = 1 ]; then
  (cd "$source_dir" && cmake --preset release -DGPUDIRECT_BUILD_TESTS=OFF &&
    cmake --build --preset release --target spank_gpudirect gpudirect-launch)
fi

exec "$source_dir/scripts/install-node.sh" --build-dir "$build_dir" "$@"
