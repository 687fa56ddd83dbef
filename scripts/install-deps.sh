#!/usr/bin/env bash
# Installs the Debian 12 or 13 packages gpudirect-slurm needs to build and test (as root); every name
# exists in both releases (versionless clang names: LLVM 14 on 12, 19 on 13). Idempotent:
# on a machine that has them all it returns in a second. Debian's slurm/munge packages try to
# start system daemons on install; a temporary policy-rc.d stops that.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config git python3 procps iproute2 util-linux
  libhwloc-dev hwloc libhwloc-plugins libfabric-dev libfabric-bin libxml2-dev catch2 libcli11-dev nlohmann-json3-dev
  libslurm-dev slurm-wlm-basic-plugins-dev slurmctld slurmd slurm-client munge
  libopenblas-dev python3-torch python3-matplotlib  # CPU training; the PyTorch oracle; plots
  python3-yaml lintian  # blueprint checks; the .deb test
  libxml2-utils  # xmllint, which the health tests use
  busybox-static  # the container root file system of the enroot hook's test
  prometheus prometheus-node-exporter  # promtool; the scrape test runs its own of each (the policy-rc.d below keeps the services from starting)
  clang libclang-rt-dev valgrind  # scripts/fuzz.sh (libFuzzer); the plugin's leak check
  clang-format)  # the style check (.clang-format; clang-format 14 on Debian 12)

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
