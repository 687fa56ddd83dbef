#!/bin/bash
# A4X (a4x-highgpu-4g) IMEX prerequisites, for the image build of a4x-slurm-blueprint.yaml. The 18 VMs
# of an NVL72 domain share GPU memory over NVLink through NVIDIA's IMEX service, which a job needs
# started on its nodes with the job's node list. slurm-gcp publishes a prolog and an epilog that do
# that (tools/prologs-epilogs/imex_prolog, imex_epilog); this script fetches them at the blueprint's
# held slurm-gcp release, so the controller's prolog/epilog run a fixed version, and checks that
# the node image has the nvidia-imex service they start. Slurm itself gives each job its IMEX
# channel (SwitchType=switch/nvidia_imex, set on the controller).
#
# Usage: a4x-imex-node-prep.sh install SLURM_GCP_REF   (image build: e.g. install 6.12.1, then check)
#        a4x-imex-node-prep.sh check                   (are the prolog and epilog where the controller runs them?)
set -euo pipefail

IMEX_DIR=${IMEX_DIR:-/usr/libexec/gpudirect-slurm/imex}

check() {
  local missing=0
  for script in imex_prolog imex_epilog; do
    if [ ! -x "$IMEX_DIR/$script" ]; then
      echo "a4x-imex-node-prep: $IMEX_DIR/$script is missing or not executable: the controller's IMEX prolog/epilog would fail every job (run '$0 install SLURM_GCP_REF')" >&2
      missing=1
    fi
  done
  [ "$missing" = 0 ] || return 1
  echo "a4x-imex-node-prep: IMEX prolog and epilog present in $IMEX_DIR"
}

case "${1:-}" in
  install)
    ref=${2:?a4x-imex-node-prep: install needs the slurm-gcp release, e.g. 6.12.1}
    mkdir -p "$IMEX_DIR"
    for script in imex_prolog imex_epilog; do
      curl -fsSL -o "$IMEX_DIR/$script" "https://raw.githubusercontent.com/GoogleCloudPlatform/slurm-gcp/$ref/tools/prologs-epilogs/$script"
      chmod 0755 "$IMEX_DIR/$script"
    done
    # The prolog does nothing where the nvidia-imex unit is absent: say so at build time instead.
    grep -Fq nvidia-imex.service < <(systemctl list-unit-files --all) ||
      echo "a4x-imex-node-prep: warning: no nvidia-imex.service in this image: the IMEX prolog will do nothing (install NVIDIA's nvidia-imex package)" >&2
    check
    ;;
  check)
    check
    ;;
  *)
    echo "a4x-imex-node-prep: error: unknown command '${1:-}' (install SLURM_GCP_REF or check; see the top of $0)" >&2
    exit 1
    ;;
esac
