#!/usr/bin/env bash
# --gpu-direct=gib on A4X nodes (a4x-highgpu-4g) on a real Slurm: 2 nodes in network namespaces with
# A4X interface names (gVNICs enp0s3 and enp192s2, RoCE netdevs gpu0rdma0 ... gpu3rdma0), 4 fake GPUs
# each, the plugin reading the constructed A4X layout on this machine's 2 CPUs (GPUs 0-1: CPU 0,
# GPUs 2-3: CPU 1). A4X's gIB values beyond the public ones are left to gIB (no tuner config, no
# NCCL_IB_TC). The doctor's IMEX check runs against a stand-in /proc/devices and channel directory.
source "$(dirname "$0")/lib.sh"
TOPOLOGY=$SRC/tests/fixtures/local-a4x-2cpu.xml
cluster up --machine a4x --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster did not start"; exit 1; }

# rocep<bus>s0: the RoCE NIC next to each GPU (constructed buses 0x14 0x24 0x94 0xa4).
hcas=(rocep20s0 rocep36s0 rocep148s0 rocep164s0)
report='echo "$SLURM_PROCID $(hostname) ${GPUDIRECT_GPUS-} ${GPUDIRECT_NICS-} $(awk "/Cpus_allowed_list/ {print \$2}" /proc/self/status) ${NCCL_IB_HCA-} ${NCCL_SOCKET_IFNAME-} ${NCCL_NET-} tuner=${NCCL_TUNER_CONFIG_PATH-} ${LD_LIBRARY_PATH%%:*} tc=${NCCL_IB_TC-} ${GPUDIRECT_GIB_MACHINE-} ${GPUDIRECT_MODE-}"'

expected_table() {
  local rank node local_rank
  for rank in $(seq 0 7); do
    node=$((rank / 4 + 1)); local_rank=$((rank % 4))
    echo "$rank node$node $local_rank ${hcas[$local_rank]} $((local_rank / 2)) =${hcas[$local_rank]} enp0s3,enp192s2 gIB tuner= $LIB_DIR tc= a4x gib"
  done
}

out=$(srun -N2 --ntasks-per-node=4 --gpus-per-task=1 --gpu-direct=gib bash -c "$report" 2>&1 | sort -n)
expect_eq "--gpu-direct=gib on A4X: every task's GPU, own RoCE NIC, Grace CPU and the public gIB environment" "$(expected_table)" "$out"

out=$(srun -N2 --ntasks-per-node=4 --gpus-per-task=1 --gpu-direct=gib "$LAUNCH" doctor 2>&1)
expect_eq "doctor inside every task agrees with the plugin (no IMEX on this machine's driver: not checked)" "8" "$(printf '%s\n' "$out" | grep -c ': OK (mode gib')"

# IMEX: a stand-in root whose /proc/devices has the channel class and no channel for the job.
imex=$CLUSTER_DIR/imex-root
mkdir -p "$imex/proc"
printf 'Character devices:\n195 nvidia\n234 nvidia-caps-imex-channels\n' >"$imex/proc/devices"
out=$(GPUDIRECT_TEST_IMEX_ROOT=$imex srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=gib "$LAUNCH" doctor 2>&1); rc=$?
[ $rc -ne 0 ] && pass "IMEX channel missing in a 2-node job: the doctor fails ($rc)" || fail "IMEX channel missing: the doctor passed" "$out"
expect_contains "IMEX channel missing: one line with node, cause and fix" "MISMATCH: node node1: a 2-node job where the GPU driver offers IMEX channels (nvidia-caps-imex-channels in /proc/devices) but this task sees no /dev/nvidia-caps-imex-channels/channelN" "$out"
mkdir -p "$imex/dev/nvidia-caps-imex-channels" && : >"$imex/dev/nvidia-caps-imex-channels/channel1"
out=$(GPUDIRECT_TEST_IMEX_ROOT=$imex srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=gib "$LAUNCH" doctor 2>&1)
expect_eq "the job's IMEX channel there: both tasks OK, naming it" "2" "$(printf '%s\n' "$out" | grep -c 'OK (mode gib.*IMEX channel1)')"

# The health sweep with a block topology (topology/block needs Slurm >= 23.11, so a topology.conf
# file stands in for scontrol show topology): node1 and node2 in one block, their pair is NVLink's.
printf 'BlockName=nvl1 Nodes=node[1-2]\nBlockSizes=2\n' >"$CLUSTER_DIR/topology-blocks.conf"
out=$(timeout 240 "$LAUNCH" --timeout 20 health --nodelist 'node[1-2]' --ntasks-per-node 1 --gpus-per-task 1 --gpu-direct off \
  -b 512K -e 512K -n 3 -w 1 --threshold 0 --pair-timeout 60 --work-dir "$CLUSTER_DIR/health" \
  --block-topology "$CLUSTER_DIR/topology-blocks.conf" --json "$CLUSTER_DIR/health.json" 2>/dev/null)
expect_contains "health: the pair inside the block is listed as an NVLink pair" "# pairs inside a block (NVLink, one IMEX domain): 1
  node1 - node2: " "$out"
expect_contains "health: no pair across blocks" "# pairs across blocks (RoCE): 0" "$out"
expect_eq "health --json: the pair's path" "in_block" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["path"])' "$CLUSTER_DIR/health.json")"

summary
