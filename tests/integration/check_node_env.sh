# check-node on the local cluster's nodes, sourced after lib.sh by tests/integration/test_check_node.sh
# and perf/node_check_fleet.sh. `check_node_env N` (after `cluster up --nodes N`) writes a healthy
# local node's expectations (local-a3mega: the A3 Mega NIC names on veths with MTU 1500, 8 stand-in
# H100s), gives each node its own files under $CLUSTER_DIR/node/NODE (nvml.conf for the NVML
# stand-in, kmsg for the kernel log, etc/ for profile.d) and its own sysfs, and writes
# $CLUSTER_DIR/check-node.sh: check-node as a node runs it, with these stand-ins and the NCCL
# stand-in (tests/nccl_standin: whether this machine has an NCCL must not change the result).
check_node_env() {
  local nodes=$1 i node
  mkdir -p "$CLUSTER_DIR/expectations" "$CLUSTER_DIR/sys"
  cat >"$CLUSTER_DIR/expectations/local-a3mega.conf" <<EOC
mode=tcpxo
gpu_count=8
gpu_model=H100
gpu_pcie_generation=5
gpu_pcie_width=16
nvlink_links=18
data_nics=enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0
data_nic_mtu=1500
EOC
  # A node's slurmd shares this machine's /sys, whose class/net is the host's: each node's mount
  # namespace gets a sysfs of its network namespace at $CLUSTER_DIR/sys (as `ip netns exec` mounts
  # one on /sys).
  for i in $(seq 1 "$nodes"); do
    node=node$i
    mkdir -p "$CLUSTER_DIR/node/$node/etc/profile.d"
    echo "count 8" >"$CLUSTER_DIR/node/$node/nvml.conf"
    echo "[    1.0] Linux version 6.1" >"$CLUSTER_DIR/node/$node/kmsg"
    nsenter --mount --target "$(cat "$CLUSTER_DIR/run/slurmd-$node.pid")" --net="/run/netns/$(node_netns "$i")" mount -t sysfs sysfs "$CLUSTER_DIR/sys"
  done
  cat >"$CLUSTER_DIR/check-node.sh" <<EOS
#!/bin/bash
# check-node as a node runs it, with this cluster's stand-ins.
node=\$(hostname)
export SLURM_CONF=$SLURM_CONF PATH=$PATH NVML_STANDIN_CONFIG=$CLUSTER_DIR/node/\$node/nvml.conf
exec $LAUNCH check-node --machine-type local-a3mega --expectations-dir $CLUSTER_DIR/expectations \\
  --nvml-library $BUILD/tests/libnvml_standin.so --nccl-library $BUILD/tests/nccl_standin/libnccl.so.2 --sysfs-root $CLUSTER_DIR/sys --etc-dir $CLUSTER_DIR/node/\$node/etc \\
  --kernel-log $CLUSTER_DIR/node/\$node/kmsg --plugstack $CLUSTER_DIR/etc/plugstack.conf "\$@"
EOS
  chmod +x "$CLUSTER_DIR/check-node.sh"
}
