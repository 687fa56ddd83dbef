#!/usr/bin/env bash
# The plugin on a real Slurm: 2 nodes in network namespaces with A3 Mega interface names, 8 fake
# GPUs each, the plugin reading an A3 Mega PCIe layout on this machine's 2 CPUs (GPUs 0-3: CPU 0,
# GPUs 4-7: CPU 1). Checks what each task really gets: environment and sched_getaffinity.
source "$(dirname "$0")/lib.sh"
cluster_up

nics=(enp6s0 enp7s0 enp13s0 enp14s0 enp134s0 enp135s0 enp141s0 enp142s0)
all_nics=$(IFS=,; echo "${nics[*]}")
# One line per task: rank host gpus nics cpus(from the kernel) and the key TCPXO variables.
report='echo "$SLURM_PROCID $(hostname) ${GPUDIRECT_GPUS-} ${GPUDIRECT_NICS-} $(awk "/Cpus_allowed_list/ {print \$2}" /proc/self/status) ${GPUDIRECT_CPUS-} ${NCCL_FASTRAK_IFNAME-} ${NCCL_FASTRAK_CTRL_DEV-} ${NCCL_SOCKET_IFNAME-} ${LD_LIBRARY_PATH%%:*} ${NCCL_NVLSTREE_MAX_CHUNKSIZE-} ${GPUDIRECT_MODE-}"'

expected_table() {
  local rank node local_rank cpu
  for rank in $(seq 0 15); do
    node=$((rank / 8 + 1)); local_rank=$((rank % 8)); cpu=$((local_rank / 4))
    echo "$rank node$node $local_rank ${nics[$local_rank]} $cpu $cpu $all_nics enp0s12 enp0s12 $LIB_DIR 131072 tcpxo"
  done
}

out=$(srun -N2 --ntasks-per-node=8 --gpus-per-task=1 --gpu-direct=tcpxo bash -c "$report" 2>&1 | sort -n)
expect_eq "--gpus-per-task=1: every task's GPU, NIC, CPU mask and TCPXO environment" "$(expected_table)" "$out"

out=$(srun -N2 --ntasks-per-node=8 --gpus-per-node=8 --gpu-direct=tcpxo bash -c "$report" 2>&1 | sort -n)
expect_eq "--gpus-per-node=8 with 8 tasks: each task its local rank's GPU" "$(expected_table)" "$out"

if with_launcher; then
  out=$(srun -N2 --ntasks-per-node=8 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" doctor 2>&1)
  expect_eq "doctor inside every task agrees with the plugin" "16" "$(printf '%s\n' "$out" | grep -c ': OK (mode tcpxo')"
else
  skip "doctor inside every task agrees with the plugin"
fi

out=$(srun -N1 -n2 --gpus-per-task=1 bash -c 'echo "${GPUDIRECT_MODE-unset} ${NCCL_FASTRAK_IFNAME-unset} ${LD_LIBRARY_PATH-unset} $(awk "/Cpus_allowed_list/ {print \$2}" /proc/self/status)"' 2>&1 | sort -u)
expect_eq "no --gpu-direct (default=off): environment and affinity untouched" "unset unset unset 0-1" "$out"

out=$(srun -N1 -n1 --gpus-per-task=1 --gpu-direct=off bash -c 'echo ${GPUDIRECT_MODE-unset}' 2>&1)
expect_eq "--gpu-direct=off: untouched" "unset" "$out"

# On node1 by name: right after the previous step node1 may still be completing, and Slurm would
# then pick node2.
out=$(srun -N1 -w node1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo,verbose true 2>&1)
expect_contains "verbose: one binding line per task on the terminal" "gpudirect: node1 task 1 (local 1): mode tcpxo gpus 1 [0000:05:00.0] nics enp7s0 cpus 0 numa 0" "$out"

out=$(srun -N1 -n1 --gpus-per-task=1 --cpu-bind=none --gpu-direct=tcpxo bash -c 'echo "$GPUDIRECT_NICS $(awk "/Cpus_allowed_list/ {print \$2}" /proc/self/status)"' 2>&1 | grep -v 'lacks support')
expect_eq "an explicit --cpu-bind from the user wins over the plugin's binding" "enp6s0 0-1" "$out"

out=$(LD_LIBRARY_PATH=/opt/user/lib NCCL_DEBUG=INFO srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo "$LD_LIBRARY_PATH $NCCL_DEBUG"' 2>&1)
expect_eq "lib dir prepended to the user's LD_LIBRARY_PATH; the user's NCCL_DEBUG kept" "$LIB_DIR:/opt/user/lib INFO" "$out"

# The rendezvous secret: srun's copy of the plugin gives each step a fresh one, with or without
# --gpu-direct, the same in every task of the step (on both nodes); one the user exported is kept.
unset GPUDIRECT_RENDEZVOUS_SECRET
step_secrets() { srun -N2 -n2 "$@" env 2>&1 | grep GPUDIRECT_RENDEZVOUS_SECRET | sort -u; }
first=$(step_secrets)
second=$(step_secrets --gpus-per-task=1 --gpu-direct=tcpxo)
if [[ $first =~ ^GPUDIRECT_RENDEZVOUS_SECRET=[0-9a-f]{64}$ && $second =~ ^GPUDIRECT_RENDEZVOUS_SECRET=[0-9a-f]{64}$ && $first != "$second" ]]; then
  pass "each step its own rendezvous secret, the same in both tasks"
else
  fail "each step its own rendezvous secret, the same in both tasks" "step 1: $first
step 2: $second"
fi
out=$(GPUDIRECT_RENDEZVOUS_SECRET=0123456789abcdef0123456789abcdef step_secrets)
expect_eq "a rendezvous secret the user exported is kept" "GPUDIRECT_RENDEZVOUS_SECRET=0123456789abcdef0123456789abcdef" "$out"
# An --export list that names it carries the step's own (Slurm 22.05's "NONE,VAR" carries no VAR).
out=$(srun -N1 -n1 --export=GPUDIRECT_RENDEZVOUS_SECRET /usr/bin/env 2>&1 | grep -c '^GPUDIRECT_RENDEZVOUS_SECRET=[0-9a-f]\{64\}$')
expect_eq "--export=GPUDIRECT_RENDEZVOUS_SECRET: the step's own secret reaches the task" "1" "$out"

summary
