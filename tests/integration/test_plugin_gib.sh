#!/usr/bin/env bash
# --gpu-direct=gib on a real Slurm: 2 nodes in network namespaces with A3 Ultra interface names
# (gVNICs enp0s19 and enp192s20, RoCE netdevs gpu0rdma0 ... gpu7rdma0), 8 fake GPUs each, the plugin
# reading an A3 Ultra PCIe layout on this machine's 2 CPUs (GPUs 0-3: CPU 0, GPUs 4-7: CPU 1). The
# gIB plugin is the stand-in libnccl-net.so lib.sh puts in the lib dir (it loads; no NCCL runs).
source "$(dirname "$0")/lib.sh"
TOPOLOGY=$SRC/tests/fixtures/local-a3ultra-2cpu.xml
cluster up --machine a3ultra --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster did not start"; exit 1; }

# rocep<bus>s0: the RoCE NIC next to each GPU, in GPU order (buses 0x91 0x92 0x98 0x99 0xc6 0xc7 0xcd 0xce).
hcas=(rocep145s0 rocep146s0 rocep152s0 rocep153s0 rocep198s0 rocep199s0 rocep205s0 rocep206s0)
report='echo "$SLURM_PROCID $(hostname) ${GPUDIRECT_GPUS-} ${GPUDIRECT_NICS-} $(awk "/Cpus_allowed_list/ {print \$2}" /proc/self/status) ${NCCL_IB_HCA-} ${NCCL_SOCKET_IFNAME-} ${NCCL_NET-} ${NCCL_TUNER_CONFIG_PATH-} ${LD_LIBRARY_PATH%%:*} ${NCCL_IB_TC-} ${GPUDIRECT_MODE-}"'

expected_table() {
  local rank node local_rank
  for rank in $(seq 0 15); do
    node=$((rank / 8 + 1)); local_rank=$((rank % 8))
    echo "$rank node$node $local_rank ${hcas[$local_rank]} $((local_rank / 4)) =${hcas[$local_rank]} enp0s19,enp192s20 gIB /usr/local/gib/configs/tuner_config_a3u.txtpb $LIB_DIR 52 gib"
  done
}

out=$(srun -N2 --ntasks-per-node=8 --gpus-per-task=1 --gpu-direct=gib bash -c "$report" 2>&1 | sort -n)
expect_eq "--gpu-direct=gib: every task's GPU, own RoCE NIC, CPU mask and gIB environment" "$(expected_table)" "$out"

out=$(srun -N2 --ntasks-per-node=8 --gpus-per-task=1 --gpu-direct=auto bash -c "$report" 2>&1 | sort -n)
expect_eq "--gpu-direct=auto on an A3 Ultra node with gIB installed: gib" "$(expected_table)" "$out"

out=$(srun -N1 -n2 --gpus-per-task=1 --gpu-direct=auto,verbose true 2>&1)
expect_contains "auto, verbose: the line names the mode and why" "gpudirect: node1 task 1 (local 1): mode gib gpus 1 [0000:90:00.0] nics rocep146s0 cpus 0 numa 0 [auto: gib (8 GPUs, gIB NCCL plugin present" "$out"

if with_launcher; then
  out=$(srun -N2 --ntasks-per-node=8 --gpus-per-task=1 --gpu-direct=gib "$LAUNCH" doctor 2>&1)
  expect_eq "doctor inside every task agrees with the plugin" "16" "$(printf '%s\n' "$out" | grep -c ': OK (mode gib')"
else
  skip "doctor inside every task agrees with the plugin"
fi

# Without the gIB plugin the task fails, naming the node, the cause and the fix.
set_plugin_args "$(base_args | sed "s|lib_dir=$LIB_DIR|lib_dir=$CLUSTER_DIR/no-gib|")"
out=$(srun -N1 -n1 --gpus-per-task=1 --gpu-direct=gib true 2>&1); rc=$?
[ $rc -ne 0 ] && pass "no gIB plugin: the step fails ($rc)" || fail "no gIB plugin: the step ran" "$out"
expect_contains "no gIB plugin: one line with node, cause and fix" "on node1: the gIB NCCL plugin is missing: no libnccl-net.so in $CLUSTER_DIR/no-gib; install Google's nccl-gib package" "$out"

summary
