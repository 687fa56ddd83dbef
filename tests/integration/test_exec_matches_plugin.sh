#!/usr/bin/env bash
# `gpudirect-launch exec` gives one process, from LOCAL_RANK/LOCAL_WORLD_SIZE and no Slurm, what the
# plugin gives the task of the same local rank: the same network environment and CPU affinity on
# the same topology and plugstack settings (exec reads the plugstack line through $SLURM_CONF).
source "$(dirname "$0")/lib.sh"
cluster_up

# What a task or process got: the binding variables, the profile's variables, the kernel's CPU mask.
# Not GPUDIRECT_STEP_GPUS (the step's GPUs as slurmstepd held them) nor GPUDIRECT_RENDEZVOUS_SECRET
# (srun's per-step secret): only a Slurm task has them.
dump='env | grep -E "^(GPUDIRECT_|NCCL_|CUDA_DEVICE_ORDER=|LD_LIBRARY_PATH=)" | grep -v -E "^GPUDIRECT_(STEP_GPUS|RENDEZVOUS_SECRET)=" | sort; awk "/Cpus_allowed_list/ {print \"cpus=\" \$2}" /proc/self/status'

out=$(env -u LD_LIBRARY_PATH srun -N1 --ntasks-per-node=8 --gpus-per-task=1 --gpu-direct=tcpxo bash -c "{ $dump; } | sed \"s/^/\$SLURM_LOCALID /\"" 2>&1)
for rank in $(seq 0 7); do
  plugin=$(printf '%s\n' "$out" | awk -v r="$rank" '$1 == r {sub(/^[0-9]+ /, ""); print}')
  exec_out=$(env -u LD_LIBRARY_PATH -u CUDA_VISIBLE_DEVICES LOCAL_RANK="$rank" LOCAL_WORLD_SIZE=8 \
    "$LAUNCH" exec --mode tcpxo -- bash -c "$dump" 2>&1)
  expect_eq "local rank $rank: exec's environment and affinity equal the plugin's" "$plugin" "$exec_out"
done

# A pod that sees all 8 GPUs (CUDA_VISIBLE_DEVICES=0..7): each rank still takes its own one.
out=$(CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 LOCAL_RANK=5 LOCAL_WORLD_SIZE=8 "$LAUNCH" exec --mode tcpxo -- \
  bash -c 'echo "$GPUDIRECT_GPUS $GPUDIRECT_NICS $(awk "/Cpus_allowed_list/ {print \$2}" /proc/self/status)"' 2>&1)
expect_eq "CUDA_VISIBLE_DEVICES with every GPU: local rank 5 takes GPU 5" "5 enp135s0 1" "$out"

out=$(LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 "$LAUNCH" exec --mode rdma -- true 2>&1); rc=$?
[ $rc -eq 1 ] && pass "exec: a mode the node cannot do fails before running CMD" || fail "exec rdma exit $rc" "$out"
expect_contains "exec: the error names the cause" "needs RDMA NICs" "$out"

out=$("$LAUNCH" exec --mode tcpxo -- /nonexistent/cmd 2>&1); rc=$?
expect_eq "exec: a missing command exits 127" "127" "$rc"

summary
