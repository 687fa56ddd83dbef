#!/usr/bin/env bash
# Node faults on a real Slurm, each a clear failure naming node, cause and fix, or a documented
# fallback (docs/reliability.md): RxDM ready and then gone, hwloc unable to read /sys, a node whose
# NIC names differ from the topology's, GPUs hidden by cgroups (ConstrainDevices numbering).
source "$(dirname "$0")/lib.sh"
cluster_up

run() { out=$("$@" 2>&1); rc=$?; }
fails_with() {  # NAME NEEDLE: the last run failed (srun non-zero) with NEEDLE in its output
  [ $rc -ne 0 ] && pass "$1: srun exits non-zero" || fail "$1: srun exited 0" "$out"
  expect_contains "$1: names node, cause and fix" "$2" "$out"
}

# 1. A node whose data NIC is named otherwise than the topology file says (enp6s0 -> eth1 on node2).
ip -n "$(node_netns 2)" link set enp6s0 down && ip -n "$(node_netns 2)" link set enp6s0 name eth1 && ip -n "$(node_netns 2)" link set eth1 up
run srun -w node2 -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
fails_with "NIC renamed on node2" "on node2: the topology (hwloc-xml:$TOPOLOGY) names network interface enp6s0 that this node does not have (it has "
expect_contains "NIC renamed: the fix" "set topology= in plugstack.conf to a file saved on such a node" "$out"
run srun -w node1 -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo $GPUDIRECT_MODE $NCCL_FASTRAK_IFNAME'
expect_eq "NIC names as in the topology on node1: the step runs" "tcpxo enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0" "$out"
run srun -w node2 -N1 -n1 --gpus-per-task=1 --gpu-direct=off true
[ $rc -eq 0 ] && pass "NIC renamed, --gpu-direct=off: the step runs" || fail "mode off failed on the renamed node" "$out"
ip -n "$(node_netns 2)" link set eth1 down && ip -n "$(node_netns 2)" link set eth1 name enp6s0 && ip -n "$(node_netns 2)" link set enp6s0 up

# 2. RxDM ready, then gone. The plugin checks readiness once per step and node, before the tasks
# fork; a later step sees it gone. Socket form: RxDM died and left its socket file behind.
socket=$CLUSTER_DIR/rxdm.sock
python3 -c 'import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(64); time.sleep(300)' "$socket" &
rxdm=$!
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
set_plugin_args "$(base_args rxdm_ready=$socket rxdm_timeout=1)"
run srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo $GPUDIRECT_MODE'
expect_eq "RxDM socket accepts connections: the step runs on both nodes" "tcpxo
tcpxo" "$out"
kill "$rxdm"; wait "$rxdm" 2>/dev/null
start=$SECONDS
run srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo true
fails_with "RxDM gone (stale socket)" "the TCPXO receive-datapath manager (RxDM) is not ready: $socket refuses connections (Connection refused) after waiting 1 s; start RxDM in the node's prolog"
expect_contains "RxDM gone: each node says so" "on node2:" "$out"
[ $((SECONDS - start)) -lt 10 ] && pass "RxDM gone: fails fast ($((SECONDS - start)) s, rxdm_timeout=1)" || fail "RxDM gone: took $((SECONDS - start)) s"
# File form: the ready file removed (an epilog of another job, a crashed prolog's cleanup).
ready=$CLUSTER_DIR/rxdm.ready
touch "$ready"
set_plugin_args "$(base_args rxdm_ready=$ready rxdm_timeout=1)"
run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo $GPUDIRECT_MODE'
expect_eq "RxDM ready file present: the step runs" "tcpxo" "$out"
rm "$ready"
run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
fails_with "RxDM ready file gone" "RxDM) is not ready: $ready does not exist after waiting 1 s"

# 3. hwloc unable to read /sys: live discovery (no topology=) on node2 under an empty /sys/bus/pci,
# mounted in node2's own mount namespace (its slurmd's, inherited by its steps).
set_plugin_args default=off lib_dir=$LIB_DIR profile_dir=$SRC/profiles
node2_slurmd=$(cat "$CLUSTER_DIR/run/slurmd-node2.pid")
if ! grep -qs '^0x03' /sys/bus/pci/devices/*/class; then  # the control: this machine's own view, without GPUs
  run srun -w node1 -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
  fails_with "live topology on node1 (this machine has no GPUs)" "on node1: --gpu-direct=tcpxo needs GPUs, but the topology (hwloc) has none"
fi
nsenter --mount --target "$node2_slurmd" mount -t tmpfs gpudirect-test-empty /sys/bus/pci
run srun -w node2 -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
fails_with "/sys/bus/pci empty on node2" "on node2: --gpu-direct=tcpxo needs GPUs, but the topology (hwloc, which saw no PCI devices: its PCI component is missing (Debian: install libhwloc-plugins) or /sys/bus/pci is empty or unreadable where slurmd runs; give it the host's /sys, or set topology=FILE in plugstack.conf) has none"
run srun -w node2 -N1 -n1 --gpus-per-task=1 --gpu-direct=auto bash -c 'echo ${GPUDIRECT_MODE-unset}'
expect_eq "/sys/bus/pci empty, auto: resolves to off, the step runs untouched" "unset" "$out"
nsenter --mount --target "$node2_slurmd" mount -t tmpfs gpudirect-test-empty /sys
run srun -w node2 -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
fails_with "all of /sys empty on node2" "on node2: --gpu-direct=tcpxo needs GPUs, but the topology (hwloc, which saw no PCI devices"

# 4. GPUs hidden by cgroups: TaskPlugin=task/cgroup, ConstrainDevices=yes, fake GPUs 195:N. A job
# holds GPUs 0-2, so the step's GPUs are 3 and up while each task sees its own as 0. A task's
# usable GPUs are the device files its cgroup lets it open (EPERM for the others).
cluster up --plugin "$PLUGIN" --plugin-args "$(base_args)" --nodes 1 --constrain-devices >/dev/null || { echo "cluster did not start"; exit 1; }
cat >"$CLUSTER_DIR/show-gpus.sh" <<EOS
#!/bin/bash
usable=""
for i in 0 1 2 3 4 5 6 7; do
  head -c1 "$CLUSTER_DIR/dev/nvidia\$i" 2>&1 | grep -q 'not permitted' || usable="\$usable\${usable:+,}\$i"
done
echo "task \$SLURM_LOCALID cuda=\$CUDA_VISIBLE_DEVICES usable=\$usable bound=\$GPUDIRECT_GPUS"
EOS
chmod +x "$CLUSTER_DIR/show-gpus.sh"
sbatch -N1 -n1 --gpus=3 --output=/dev/null --wrap 'sleep 120' >/dev/null
for _ in $(seq 100); do [ -n "$(squeue -h -t R)" ] && break; sleep 0.1; done
run srun -N1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo "$CLUSTER_DIR/show-gpus.sh"
expect_eq "ConstrainDevices, --gpus-per-task=1: each task bound to the GPU its cgroup holds" "task 0 cuda=0 usable=3 bound=3
task 1 cuda=0 usable=4 bound=4" "$(sort <<<"$out")"
run srun -N1 -n2 --gpus-per-task=2 --gpu-direct=tcpxo "$CLUSTER_DIR/show-gpus.sh"
expect_eq "ConstrainDevices, --gpus-per-task=2: both GPUs of each task" "task 0 cuda=0,1 usable=3,4 bound=3,4
task 1 cuda=0,1 usable=5,6 bound=5,6" "$(sort <<<"$out")"
run srun -N1 -n2 --gpus=2 --gpu-bind=none --gpu-direct=tcpxo "$CLUSTER_DIR/show-gpus.sh"
expect_eq "ConstrainDevices, --gpu-bind=none (no GPU variable in the tasks): the step's GPUs split by local rank" "task 0 cuda= usable=3,4 bound=3
task 1 cuda= usable=3,4 bound=4" "$(sort <<<"$out")"
scancel -u root

summary
