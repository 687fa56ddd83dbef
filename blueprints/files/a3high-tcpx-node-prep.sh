#!/bin/bash
# A3 High (GPUDirect-TCPX) node prerequisites, for the image build of a3high-slurm-blueprint.yaml:
#  - the TCPX-capable kernel (linux-gcp-tcpx from Canonical's private PPA; Google gives the
#    credentials and key), made the default boot entry and held;
#  - the GPU/NIC topology RxDM reads (gpudirect-rxdm's RXDM_TCPX_TOPOLOGY): on a3-highgpu-8g each of
#    the 4 data NICs serves the 2 GPUs on its PCIe switch, RX queues 8-11 and 12-15.
# Usage: a3high-tcpx-node-prep.sh [--topology-only] KERNEL_LOGIN KERNEL_PASSWORD KEYSERVER_KEY_ID
set -euo pipefail

TOPOLOGY=${TOPOLOGY:-/opt/tcpdirect_benchmark/gpu_rxq_configuration.textproto}
PPA=https://private-ppa.launchpadcontent.net/canonical-kernel-gcp-tcpx/release/ubuntu

write_topology() {
  mkdir -p "$(dirname "$TOPOLOGY")"
  {
    local nic gpu_a gpu_b ifname gpu first
    # NIC bus, its interface, the two GPU buses behind the same switch
    while read -r nic ifname gpu_a gpu_b; do
      echo "gpu_rxq_configs {"
      for gpu in "$gpu_a" "$gpu_b"; do
        first=$([ "$gpu" = "$gpu_a" ] && echo 8 || echo 12)
        printf '  gpu_infos {\n    gpu_pci_addr: "0000:%s:00.0"\n' "$gpu"
        printf '    queue_ids: %d\n' $(seq "$first" $((first + 3)))
        echo "  }"
      done
      printf '  nic_pci_addr: "0000:%s:00.0"\n  ifname: "%s"\n}\n' "$nic" "$ifname"
    done <<'TABLE'
06 enp6s0 04 05
0c enp12s0 0a 0b
86 enp134s0 84 85
8c enp140s0 8a 8b
TABLE
    printf 'rss_set_size: 8\ntcpd_queue_size: 8\nmax_rx_rules: 100000\n'
  } >"$TOPOLOGY"
}

topology_only=0
[ "${1:-}" = --topology-only ] && { topology_only=1; shift; }
write_topology
[ "$topology_only" = 1 ] && exit 0

[ $# -eq 3 ] || { echo "a3high-tcpx-node-prep: error: give KERNEL_LOGIN KERNEL_PASSWORD KEYSERVER_KEY_ID (the deployment file's tcpx_* variables, from Google)" >&2; exit 1; }
login=$1 password=$2 key=$3
# shellcheck source=/dev/null
release=$(. /etc/os-release && echo "$VERSION_CODENAME")
install -m 0600 /dev/null /etc/apt/auth.conf.d/gcp-tcpx.conf
printf 'machine %s\nlogin %s\npassword %s\n' "${PPA#https://}" "$login" "$password" >/etc/apt/auth.conf.d/gcp-tcpx.conf
gpg --batch --keyserver keyserver.ubuntu.com --recv-keys "$key"
gpg --batch --export "$key" >/usr/share/keyrings/gcp-tcpx.gpg
echo "deb [signed-by=/usr/share/keyrings/gcp-tcpx.gpg] $PPA $release main" >/etc/apt/sources.list.d/gcp-tcpx.list
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q dkms linux-gcp-tcpx
apt-mark hold linux-gcp-tcpx linux-image-gcp-tcpx linux-headers-gcp-tcpx
# Boot the newest tcpx kernel even if a standard gcp kernel is newer.
version=$(find /boot -name 'vmlinuz-*tcpx*' -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$version" ] || { echo "a3high-tcpx-node-prep: error: linux-gcp-tcpx installed no /boot/vmlinuz-*tcpx*: check the PPA credentials and release '$release'" >&2; exit 1; }
sed -i "s|^GRUB_DEFAULT=.*|GRUB_DEFAULT=\"Advanced options for Ubuntu>Ubuntu, with Linux $version\"|" /etc/default/grub
update-grub
