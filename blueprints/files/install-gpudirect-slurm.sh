#!/bin/bash
# Image-build step of the blueprints (a startup-script runner in the Packer image build): fetches
# gpudirect-slurm, builds it against the image's own Slurm (slurm-gcp installs Slurm from source
# under /usr/local, so its spank.h is /usr/local/include/slurm/spank.h), and installs it with
# scripts/install-node.sh, the same script an admin runs by hand: the image gets exactly what that
# script installs. Every argument after `--` goes to install-node.sh (the plugstack line).
#
# By default it builds and installs the plugin alone (core + spank_gpudirect.so: a C++20 compiler,
# CMake >= 3.18, hwloc, libxml2, Slurm's headers), which the image's own toolchain builds (Ubuntu
# 22.04: GCC 11, CMake 3.22). --with-launcher also builds and installs gpudirect-launch, whose
# dependencies (libfabric, CLI11, nlohmann-json, OpenBLAS, OpenMP; CMake >= 3.25) it then installs.
#
# Usage: install-gpudirect-slurm.sh [--repo URL --ref REF | --source DIR] [--build-dir DIR]
#                                   [--with-launcher] [--no-deps] [--no-build] -- INSTALL_NODE_ARGS...
set -euo pipefail

repo="" ref="" source_dir="" build_dir="" deps=1 build=1 launcher=OFF
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) repo=$2; shift 2 ;;
    --ref) ref=$2; shift 2 ;;
    --source) source_dir=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --with-launcher) launcher=ON; shift ;;
    --no-deps) deps=0; shift ;;
    --no-build) build=0; shift ;;
    --) shift; break ;;
    *) echo "install-gpudirect-slurm: error: unknown option '$1' (see the usage at the top of $0)" >&2; exit 1 ;;
  esac
done

if [ "$deps" = 1 ]; then
  # Exactly what the build below needs. Slurm itself is the image's (never Debian's/Ubuntu's
  # libslurm-dev, whose version would not match the slurmd the plugin runs in). libhwloc-plugins is
  # hwloc's PCI component: without it the plugin sees no GPUs or NICs on a live node.
  packages=(g++ make cmake pkg-config libhwloc-dev libhwloc-plugins libxml2-dev)
  [ -n "$source_dir" ] || packages+=(git ca-certificates)
  [ "$launcher" = OFF ] || packages+=(libfabric-dev libcli11-dev nlohmann-json3-dev libopenblas-dev libssl-dev)
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${packages[@]}"
fi

if [ -z "$source_dir" ]; then
  [ -n "$repo" ] && [ -n "$ref" ] || { echo "install-gpudirect-slurm: error: give --repo URL --ref REF, or --source DIR" >&2; exit 1; }
  source_dir=/opt/gpudirect-slurm/src
  rm -rf "$source_dir"
  git clone --depth 1 --branch "$ref" "$repo" "$source_dir"
fi
[ -n "$build_dir" ] || build_dir=$source_dir/build/image

if [ "$build" = 1 ]; then
  # No preset: CMakePresets.json needs CMake 3.25, the plugin alone 3.18.
  targets=(spank_gpudirect)
  [ "$launcher" = OFF ] || targets+=(gpudirect-launch)
  cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUDIRECT_BUILD_TESTS=OFF \
    -DGPUDIRECT_BUILD_LAUNCHER="$launcher"
  cmake --build "$build_dir" --target "${targets[@]}" -j "$(nproc)"
fi

exec "$source_dir/scripts/install-node.sh" --build-dir "$build_dir" "$@"
