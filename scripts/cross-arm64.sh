#!/usr/bin/env bash
# Cross-builds gpudirect-slurm for arm64 (Grace: GB200/A4X, GH200) on a Debian 12/13 x86-64 host and
# runs the unit tests under qemu-user:
#   scripts/cross-arm64.sh [--no-install] [--plugin-only] [--no-tests] [--deb] [--jobs N] [-- CTEST_ARGS...]
# 1. (as root, unless --no-install) installs Debian's cross toolchain (crossbuild-essential-arm64,
#    g++-aarch64-linux-gnu), qemu-user and the arm64 libraries through multiarch
#    (dpkg --add-architecture arm64): hwloc, libxml2, libfabric, OpenBLAS. Catch2 2, CLI11 and
#    nlohmann-json are header-only: the host's packages serve. libslurm-dev is not Multi-Arch: same
#    (it cannot sit beside the host's libslurm-dev:amd64), so its arm64 .deb is unpacked under
#    build/arm64-deps/ and only its headers (slurm/spank.h) are used.
# 2. configures the preset arm64-cross (cmake/toolchains/aarch64-linux-gnu.cmake; CUDA off,
#    warnings are errors), builds core, plugin, launcher and the tests (--plugin-only: core and
#    spank_gpudirect.so), and runs ctest -L unit under qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR),
#    300 s per entry, without the exhaustive collectives case (every algorithm at 1..8 ranks, every
#    type and op: 40 s natively, over 20 min under qemu); CTEST_ARGS after -- replace that choice.
# 3. --deb: builds the arm64 .deb with CPack (build/arm64-cross/gpudirect-slurm_*_arm64.deb).
# Prints each step with its time; exit status 1 when a step or a test failed. --jobs defaults to 2.
set -euo pipefail
cd "$(dirname "$0")/.."

install=1 plugin_only=0 tests=1 deb=0 jobs=2
ctest_args=(-E "at 1\.\.8 ranks")
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --no-install) install=0 ;;
    --plugin-only) plugin_only=1 ;;
    --no-tests) tests=0 ;;
    --deb) deb=1 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "cross-arm64: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

build=build/arm64-cross
deps=build/arm64-deps
started=$(date +%s)
step() { printf '[cross-arm64 %s +%4ss] %s\n' "$(date -u +%H:%M:%S)" "$(($(date +%s) - started))" "$*"; }
die() { printf 'cross-arm64: %s\n' "$*" >&2; exit 1; }

[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] ||
  die "this host is $(dpkg --print-architecture 2>/dev/null || uname -m), not Debian amd64: on an arm64 host build natively (cmake --preset ci)"

arm64_packages=(libhwloc-dev:arm64 libxml2-dev:arm64 libfabric-dev:arm64 libopenblas-dev:arm64 libgomp1:arm64 libssl-dev:arm64)
host_packages=(crossbuild-essential-arm64 g++-aarch64-linux-gnu qemu-user cmake ninja-build pkg-config
  catch2 libcli11-dev nlohmann-json3-dev)
if [ "$install" = 1 ]; then
  missing=()
  for p in "${host_packages[@]}" "${arm64_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ] || ! grep -qx arm64 < <(dpkg --print-foreign-architectures); then
    [ "$(id -u)" -eq 0 ] || die "run as root to install ${missing[*]:-the arm64 architecture} (or --no-install when they are there)"
    step "installing ${missing[*]:-nothing} (dpkg --add-architecture arm64)"
    dpkg --add-architecture arm64
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # Multi-Arch: same libraries must have the same version for both architectures: apt may
    # upgrade the host's copy to match.
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
      die "apt-get install ${missing[*]} failed: an arm64 library whose amd64 twin is held at another version? (apt-get install -s ... says which)"
  fi
  if [ ! -f "$deps/usr/include/slurm/spank.h" ]; then
    step "unpacking libslurm-dev:arm64's headers into $deps (not Multi-Arch: same, so not installed)"
    mkdir -p "$deps"
    (cd "$deps" && rm -f libslurm-dev_*_arm64.deb && apt-get download -q libslurm-dev:arm64 >/dev/null) ||
      die "apt-get download libslurm-dev:arm64 failed: is arm64 an architecture of apt (dpkg --add-architecture arm64; apt-get update)?"
    dpkg-deb -x "$deps"/libslurm-dev_*_arm64.deb "$deps"
  fi
fi
command -v aarch64-linux-gnu-g++ >/dev/null || die "no aarch64-linux-gnu-g++: install g++-aarch64-linux-gnu (drop --no-install)"
[ -f "$deps/usr/include/slurm/spank.h" ] || die "no $deps/usr/include/slurm/spank.h: run without --no-install once"

step "configuring the preset arm64-cross"
configure=(-DSLURM_INCLUDE_DIR="$PWD/$deps/usr/include")
[ "$plugin_only" = 1 ] && configure+=(-DGPUDIRECT_BUILD_LAUNCHER=OFF -DGPUDIRECT_BUILD_TESTS=OFF)
cmake --preset arm64-cross "${configure[@]}" >"$build.configure.log" 2>&1 ||
  { tail -20 "$build.configure.log" >&2; die "configure failed (whole log: $build.configure.log)"; }

step "building with -j$jobs"
build_start=$(date +%s)
cmake --build --preset arm64-cross -j "$jobs" >"$build.build.log" 2>&1 ||
  { grep -E 'error|Error' "$build.build.log" | head -20 >&2; die "build failed (whole log: $build.build.log)"; }
step "built in $(($(date +%s) - build_start)) s: $(file -b "$build/plugin/spank_gpudirect.so" | cut -d, -f1-2)"

status=0
if [ "$tests" = 1 ] && [ "$plugin_only" = 0 ]; then
  command -v qemu-aarch64 >/dev/null || die "no qemu-aarch64: install qemu-user (drop --no-install)"
  step "running ctest -L unit under qemu-aarch64 ${ctest_args[*]}"
  test_start=$(date +%s)
  ctest --preset arm64-cross -L unit -j "$jobs" --timeout 300 "${ctest_args[@]}" >"$build.ctest.log" 2>&1 || status=1
  summary=$(grep -E 'tests passed|tests failed' "$build.ctest.log" | tail -1)
  step "unit tests in $(($(date +%s) - test_start)) s: ${summary:-no summary (see $build.ctest.log)}"
  if [ "$status" != 0 ]; then
    sed -n '/The following tests FAILED/,$p' "$build.ctest.log" | head -40 >&2
  fi
fi

if [ "$deb" = 1 ]; then
  step "building the arm64 .deb (CPack)"
  (cd "$build" && cpack -G DEB >cpack.log 2>&1) || { tail -20 "$build/cpack.log" >&2; die "cpack failed (whole log: $build/cpack.log)"; }
  step "package: $(ls "$build"/*_arm64.deb)"
fi
step "done ($([ $status = 0 ] && echo ok || echo 'FAILED tests, see '"$build.ctest.log"))"
exit "$status"
