#!/usr/bin/env bash
# Installs the Debian 12 or 13 packages gpudirect-slurm needs to build and test (as root); every name
# exists in both releases (versionless clang names: LLVM 14 on 12, 19 on 13). Idempotent:
# on a machine that has them all it returns in a second. Debian's slurm/munge packages try to
# start system daemons on install; a temporary policy-rc.d stops that.
#
# Usage: scripts/install-deps.sh [--set all|launcher|plugin]
#   all       (default) everything: the build, every test, fuzzing, the style check
#   launcher  the plugin and gpudirect-launch with its unit tests, and the local cluster their
#             integration tests run on (what tests/platforms/release_matrix.sh installs in a root)
#   plugin    the plugin alone (core + spank_gpudirect.so) and the local cluster: the set Debian 11
#             has every name of (no CLI11 package there; GCC 10 does not build gpudirect-launch)
set -euo pipefail

set_name=all
while [ $# -gt 0 ]; do
  case "$1" in
    --set) set_name=${2:?--set needs all, launcher or plugin}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: error: unknown option '$1' (try --help)" >&2; exit 1 ;;
  esac
done

# The plugin's build, and the local cluster (scripts/local-cluster.sh) with what its tests use.
plugin=(build-essential cmake ninja-build pkg-config python3 procps iproute2 util-linux
  libhwloc-dev hwloc libhwloc-plugins libxml2-dev
  libslurm-dev slurmctld slurmd slurm-client munge)
launcher=(libfabric-dev libfabric-bin catch2 libcli11-dev nlohmann-json3-dev
  libopenblas-dev  # CPU training
  libssl-dev)  # libcrypto: the rendezvous handshake's HMAC-SHA256
rest=(git slurm-wlm-basic-plugins-dev
  python3-torch python3-matplotlib  # the PyTorch oracle; plots
  python3-yaml lintian help2man  # blueprint checks; the .deb test; the .deb's manual pages (cmake/ManPages.cmake)
  libxml2-utils  # xmllint, which the health tests use
  busybox-static  # the container root file system of the enroot hook's test
  docker.io iptables libcap2-bin  # the RxDM prolog's test against a real dockerd (test_rxdm_docker.sh starts its own; iptables-save to check the firewall, capsh for its runc wrapper)
  prometheus prometheus-node-exporter  # promtool; the scrape test runs its own of each (the policy-rc.d below keeps the services from starting)
  clang libclang-rt-dev libomp-dev valgrind  # scripts/fuzz.sh (libFuzzer; clang's OpenMP, which the configure checks); the plugin's leak check
  debootstrap  # the release matrix's clean roots (run-tests.sh tests Debian 11's Slurm in one)
  clang-format)  # the style check (.clang-format; clang-format 14 on Debian 12)
case "$set_name" in
  plugin) packages=("${plugin[@]}") ;;
  launcher) packages=("${plugin[@]}" "${launcher[@]}") ;;
  all) packages=("${plugin[@]}" "${launcher[@]}" "${rest[@]}") ;;
  *) echo "install-deps: error: --set must be all, launcher or plugin, not '$set_name'" >&2; exit 1 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "install-deps: run as root to install: ${missing[*]}" >&2; exit 1; }

echo "install-deps: installing ${missing[*]}"
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  created_policy=1
fi
trap '[ "$created_policy" = 1 ] && rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
