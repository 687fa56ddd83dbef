#!/bin/bash
# A3 Mega (GPUDirect-TCPXO) node prerequisites, for the image build of a3mega-slurm-blueprint.yaml.
# RxDM needs two things from the node: the dmabuf import helper kernel module (/dev/dmabuf_import_helper)
# and the NIC aperture devices (PCI 1ae0:0084) under /dev/aperture_devices. slurmd must not start
# before the latter exist: an empty /dev/aperture_devices made RxDM fail on real clusters.
#
# Usage: a3mega-tcpxo-node-prep.sh install   (image build: module, udev rule, slurmd drop-in)
#        a3mega-tcpxo-node-prep.sh wait      (slurmd's ExecStartPre: wait for the aperture devices)
#        a3mega-tcpxo-node-prep.sh bind DEV  (the udev rule: expose PCI device DEV there)
# Only nodes with an aperture device wait; controller and login nodes boot from the same image.
set -euo pipefail

INSTALLED=/usr/local/sbin/a3mega-tcpxo-node-prep
APERTURE_DIR=${APERTURE_DIR:-/dev/aperture_devices}
PCI_ROOT=${PCI_ROOT:-/sys/bus/pci/devices}
WAIT_SECONDS=${WAIT_SECONDS:-120}

has_aperture_device() {  # is there a PCI device 1ae0:0084 on this machine?
  local dev
  for dev in "$PCI_ROOT"/*; do
    [ "$(cat "$dev/vendor" 2>/dev/null)" = 0x1ae0 ] && [ "$(cat "$dev/device" 2>/dev/null)" = 0x0084 ] && return 0
  done
  return 1
}

case "${1:-}" in
  install)
    install -D -m 0755 "$0" "$INSTALLED"
    # The module is the DKMS package dmabuf-import-helper in Google's gpudirect-tcpxo apt repository,
    # an Artifact Registry repository (apt needs its ar+https transport first). Skipped when the image
    # already has the module; load it at boot when it is there.
    if ! modinfo import-helper >/dev/null 2>&1; then
      export DEBIAN_FRONTEND=noninteractive
      echo "deb http://packages.cloud.google.com/apt apt-transport-artifact-registry-stable main" \
        >/etc/apt/sources.list.d/artifact-registry.list
      apt-get update -q && apt-get install -y -q apt-transport-artifact-registry dkms
      echo "deb [arch=all trusted=yes] ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-tcpxo-apt main" \
        >/etc/apt/sources.list.d/gpudirect-tcpxo.list
      apt-get update -q && apt-get install -y -q dmabuf-import-helper
    fi
    if modinfo import-helper >/dev/null 2>&1; then
      echo import-helper >/etc/modules-load.d/gpudirect-tcpxo.conf
    else
      echo "a3mega-tcpxo-node-prep: warning: no import-helper kernel module in this image; gpudirect-rxdm's prolog will fail on A3 Mega until it is installed (DKMS package dmabuf-import-helper)" >&2
    fi
    # udev runs RUN+= programs in its own mount namespace: systemd-mount makes the bind visible to all.
    cat >/etc/udev/rules.d/60-gpudirect-aperture.rules <<RULE
ACTION=="add", SUBSYSTEM=="pci", ATTR{vendor}=="0x1ae0", ATTR{device}=="0x0084", RUN+="$INSTALLED bind %k"
RULE
    mkdir -p /etc/systemd/system/slurmd.service.d
    cat >/etc/systemd/system/slurmd.service.d/gpudirect-aperture.conf <<UNIT
[Service]
ExecStartPre=$INSTALLED wait
UNIT
    systemctl daemon-reload || true
    ;;
  bind)
    dev=${2:?a3mega-tcpxo-node-prep: bind needs a PCI device name (the udev %k)}
    mkdir -p "$APERTURE_DIR"
    systemd-mount --type=none --options=bind --collect "$PCI_ROOT/$dev" "$APERTURE_DIR/$dev"
    chmod 0666 "$APERTURE_DIR/$dev"/resource*   # RxDM maps these as an unprivileged user too
    ;;
  wait)
    has_aperture_device || exit 0
    for ((waited = 0; waited < WAIT_SECONDS; waited += 2)); do
      [ -n "$(ls -A "$APERTURE_DIR" 2>/dev/null)" ] && exit 0
      sleep 2
    done
    echo "a3mega-tcpxo-node-prep: $APERTURE_DIR is still empty after ${WAIT_SECONDS} s on a node with PCI 1ae0:0084 devices; slurmd not started (check /etc/udev/rules.d/60-gpudirect-aperture.rules and 'journalctl -u systemd-udevd')" >&2
    exit 1
    ;;
  *)
    echo "a3mega-tcpxo-node-prep: error: unknown command '${1:-}' (install, wait or bind DEV; see the top of $0)" >&2
    exit 1
    ;;
esac
