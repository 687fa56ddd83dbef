#!/usr/bin/env bash
# #SBATCH --gpu-direct reaches every step of the job; srun --gpu-direct=off inside overrides it.
source "$(dirname "$0")/lib.sh"
cluster_up

script=$CLUSTER_DIR/job.sbatch
cat >"$script" <<'JOB'
#!/bin/bash
#SBATCH -N2 --ntasks-per-node=2 --gpus-per-task=1
#SBATCH --gpu-direct=tcpxo
srun bash -c 'echo "inherited $SLURM_PROCID ${GPUDIRECT_MODE-unset} ${GPUDIRECT_NICS-unset}"'
srun --gpu-direct=off bash -c 'echo "override $SLURM_PROCID ${GPUDIRECT_MODE-unset}"'
JOB
out_file=$CLUSTER_DIR/job.out
if timeout 120 sbatch --wait -o "$out_file" "$script" >/dev/null; then pass "sbatch job with #SBATCH --gpu-direct=tcpxo completed"; else fail "sbatch job failed" "$(cat "$out_file" 2>/dev/null)"; fi
out=$(grep '^inherited' "$out_file" | sort -k2n)
expect_eq "steps inherit #SBATCH --gpu-direct=tcpxo" "inherited 0 tcpxo enp6s0
inherited 1 tcpxo enp7s0
inherited 2 tcpxo enp6s0
inherited 3 tcpxo enp7s0" "$out"
out=$(grep '^override' "$out_file" | awk '{print $3}' | sort -u)
expect_eq "srun --gpu-direct=off overrides the batch option" "unset" "$out"

summary
