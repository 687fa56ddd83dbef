#!/bin/bash
# A3 Ultra / A4 (NCCL/gIB) node prerequisites, for the image build of a3ultra-slurm-blueprint.yaml
# and a4high-slurm-blueprint.yaml. Installs Google's nccl-gib package (the gIB NCCL plugin, NCCL and
# the tuner configs under /usr/local/gib) held at one version, so every node of a job runs the same
# gIB, and the verbs libraries the plugin loads. It writes no /etc/profile.d hook: the plugstack line
# (--gpu-direct=gib, the partition's default) gives gIB's environment to the jobs that ask for it.
#
# Usage: gib-node-prep.sh install VERSION   (image build: e.g. install v1.1.0, then check)
#        gib-node-prep.sh check             (is gIB where the plugin looks for it?)
set -euo pipefail

GIB_ROOT=${GIB_ROOT:-/usr/local/gib}
PROFILE_HOOK=${PROFILE_HOOK:-/etc/profile.d/nccl-gib.sh}

check() {
  if [ ! -e "$GIB_ROOT/lib64/libnccl-net.so" ]; then
    echo "gib-node-prep: $GIB_ROOT/lib64/libnccl-net.so is missing: the nccl-gib package did not install the gIB plugin there, so --gpu-direct=gib would fail on every node (check 'dpkg -L nccl-gib')" >&2
    return 1
  fi
  # Google's own blueprints add this hook; with the plugin it would set gIB's variables for every
  # login shell, on machines without gIB too ("network gIB not found").
  if [ -e "$PROFILE_HOOK" ]; then
    echo "gib-node-prep: warning: $PROFILE_HOOK exists and exports gIB's environment to every login shell; the plugin does that per job (--gpu-direct=gib): remove it" >&2
  fi
  echo "gib-node-prep: gIB plugin present in $GIB_ROOT/lib64"
}

case "${1:-}" in
  install)
    version=${2:?gib-node-prep: install needs the nccl-gib version, e.g. v1.1.0}
    export DEBIAN_FRONTEND=noninteractive
    # nccl-gib is in Google's gpudirect-gib-apt repository, an Artifact Registry repository: apt
    # needs its ar+https transport first (from packages.cloud.google.com). Both signing keys are
    # the ones Google publishes for these repositories.
    curl -fsSL https://packages.cloud.google.com/apt/doc/apt-key.gpg | gpg --dearmor --yes -o /usr/share/keyrings/cloud-google.gpg
    curl -fsSL https://us-apt.pkg.dev/doc/repo-signing-key.gpg | gpg --dearmor --yes -o /usr/share/keyrings/us-apt-pkg-dev.gpg
    echo "deb [signed-by=/usr/share/keyrings/cloud-google.gpg] http://packages.cloud.google.com/apt apt-transport-artifact-registry-stable main" \
      >/etc/apt/sources.list.d/artifact-registry.list
    apt-get update -q && apt-get install -y -q apt-transport-artifact-registry
    echo "deb [signed-by=/usr/share/keyrings/us-apt-pkg-dev.gpg] ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt main" \
      >/etc/apt/sources.list.d/nccl-gib.list
    apt-get update -q
    apt-get install -y -q --allow-downgrades "nccl-gib=$version" ibverbs-utils libibverbs1 ibverbs-providers
    apt-mark hold nccl-gib
    check
    ;;
  check)
    check
    ;;
  *)
    echo "gib-node-prep: error: unknown command '${1:-}' (install VERSION or check; see the top of $0)" >&2
    exit 1
    ;;
esac
