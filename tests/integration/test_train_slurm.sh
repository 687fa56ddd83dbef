#!/usr/bin/env bash
# gpudirect-launch train under the real local Slurm: 2 nodes (network namespaces) x 2 ranks over
# libfabric tcp with --gpu-direct, each rank on the plugin's NIC. Data parallelism gives the
# parameters of 1 rank with the whole batch, with and without ZeRO-1; the local sbatch script runs.
source "$(dirname "$0")/lib.sh"
cluster_up
common=(train --backend libfabric --preset tiny --steps 4 --threads 1 --lr 1e-3 --peak-tflops 0.05 --first-bucket-mib 0.05 --bucket-mib 0.1)

# Same parameters at the end and the same loss and gradient norm at every step (tests/train/same_training.py).

"$LAUNCH" "${common[@]}" --micro-batch 4 --checkpoint "$CLUSTER_DIR/one.ckpt" -J "$CLUSTER_DIR/one.json" >"$CLUSTER_DIR/one.log" 2>&1 \
  || fail "1-rank reference run" "$(tail -5 "$CLUSTER_DIR/one.log")"
for zero in "" --zero1; do
  name="2 nodes x 2 ranks x micro-batch 1${zero:+ with ZeRO-1} over tcp with --gpu-direct = 1 rank x 4"
  out=$(timeout 240 srun -N2 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo --kill-on-bad-exit=1 "$LAUNCH" --timeout 60 \
        "${common[@]}" --micro-batch 1 $zero --checkpoint "$CLUSTER_DIR/slurm$zero.ckpt" -J "$CLUSTER_DIR/slurm$zero.json" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then fail "$name (rc $rc)" "$(printf '%s\n' "$out" | tail -15)"; continue; fi
  if result=$(python3 "$SRC/tests/train/same_training.py" "$CLUSTER_DIR/one.ckpt" "$CLUSTER_DIR/slurm$zero.ckpt" "$CLUSTER_DIR/one.json" "$CLUSTER_DIR/slurm$zero.json"); then pass "$name ($result)"; else fail "$name ($result)"; fi
  expect_contains "collectives over libfabric tcp" "collectives over libfabric:$ACROSS_PROVIDER" "$out"
  expect_contains "4 ranks on 2 hosts" "4 rank(s) on 2 host(s)" "$out"
  expect_contains "end-of-run parameter check" "parameters identical on all 4 rank(s)" "$out"
done

job_out=$CLUSTER_DIR/train-local.out
if GPUDIRECT_LAUNCH=$LAUNCH CHECKPOINT=$CLUSTER_DIR/sbatch.ckpt timeout 300 sbatch --wait -o "$job_out" "$SRC/scripts/sbatch/train-local.sbatch" >/dev/null; then
  expect_contains "train-local.sbatch runs 10 steps" "summary: 10 step(s)" "$(cat "$job_out")"
else
  fail "train-local.sbatch failed" "$(tail -20 "$job_out")"
fi

summary
