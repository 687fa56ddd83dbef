#!/usr/bin/env bash
# slurm-gcp's node configuration (local-cluster.sh --slurm-gcp: task/cgroup,task/affinity,
# proctrack/cgroup, ConstrainCores, ConstrainDevices): the plugin binds each task to the GPU its
# cgroup holds, the doctor and exec inside each task agree with it, and a step whose tasks each see only
# their own GPU is warned that NCCL loses NVLink, naming the srun line that keeps it.
source "$(dirname "$0")/lib.sh"
cluster up --plugin "$PLUGIN" --plugin-args "$(base_args)" --nodes 1 --slurm-gcp >/dev/null || { echo "cluster did not start"; exit 1; }

# The GPUs a task can open are the device files its cgroup allows (EPERM for the others).
cat >"$CLUSTER_DIR/show-gpus.sh" <<EOS
#!/bin/bash
usable=""
for i in 0 1 2 3 4 5 6 7; do
  head -c1 "$CLUSTER_DIR/dev/nvidia\$i" 2>&1 | grep -q 'not permitted' || usable="\$usable\${usable:+,}\$i"
done
echo "task \$SLURM_LOCALID usable=\$usable bound=\$GPUDIRECT_GPUS"
EOS
chmod +x "$CLUSTER_DIR/show-gpus.sh"
# Comparisons take the tasks' lines only: srun may add "job N queued and waiting for resources"
# while the previous step's cgroups are still being removed.
fix="srun --gpus-per-node=2 --ntasks-per-node=2"  # the step's own numbers: 2 tasks, a GPU each

# 1. --gpus-per-task=1: each task's cgroup holds one GPU; the plugin binds it, the doctor agrees.
# Slurm 20.11 constrains devices per step, not per task: each task's cgroup holds both of the step's
# GPUs (measured on 20.11.4; 22.05.8, 24.11.5 and 26.05.5 give each task its own; 21.08 is not in the
# matrix and is taken as the newer behaviour). The plugin must still bind each task to its own, and
# then NVLink is not lost, so no warning.
if slurm_at_least 21.08; then per_task_cgroup=1; else per_task_cgroup=0; fi
out=$(srun -N1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo "$CLUSTER_DIR/show-gpus.sh" 2>&1)
if [ "$per_task_cgroup" = 1 ]; then
  expect_eq "--gpus-per-task=1: each task bound to the GPU its cgroup holds" "task 0 usable=0 bound=0
task 1 usable=1 bound=1" "$(grep '^task' <<<"$out" | sort)"
else
  expect_eq "--gpus-per-task=1 on Slurm $SLURM_VERSION: each task sees the step's GPUs, bound to its own" "task 0 usable=0,1 bound=0
task 1 usable=0,1 bound=1" "$(grep '^task' <<<"$out" | sort)"
fi
if with_launcher; then
  out=$(srun -N1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" doctor 2>&1)
  rc=$?
  [ $rc -eq 0 ] && pass "--gpus-per-task=1: the doctor exits 0 on every task" || fail "--gpus-per-task=1: the doctor exited $rc" "$out"
  expect_eq "--gpus-per-task=1: the doctor says OK for both tasks" "2" "$(grep -c ': OK (mode tcpxo' <<<"$out")"
  expect_contains "--gpus-per-task=1: the doctor warns that NVLink is lost, naming the fix" "WARNING: each of the node's 2 tasks sees only its own GPU" "$out"
  expect_contains "--gpus-per-task=1: the doctor's warning names the srun line" "$fix" "$out"
  # The tasks share slurmstepd's root: no container warning, even where the host itself is a
  # container (this machine has /.dockerenv when it runs in Docker).
  if grep -q "in a container" <<<"$out"; then fail "the tasks are not in a container (host: $(ls /.dockerenv 2>/dev/null || echo no marker))" "$out"; else pass "the tasks are not in a container (host: $(ls /.dockerenv 2>/dev/null || echo no marker))"; fi
  # exec inside each task (no LOCAL_RANK: Slurm's variables) reads the task's place as the plugin did.
  out=$(srun -N1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" exec --mode tcpxo -- bash -c 'echo "task $SLURM_LOCALID exec=$GPUDIRECT_GPUS"' 2>&1)
  expect_eq "--gpus-per-task=1: exec in each task binds what the plugin bound" "task 0 exec=0
task 1 exec=1" "$(grep '^task' <<<"$out" | sort)"

  # The doctor still catches a task that did not get what the plugin planned: task 1 made to look
  # bound to GPU 0, or handed another step's GPUs.
  out=$(srun -N1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo bash -c '[ "$SLURM_LOCALID" = 1 ] && export GPUDIRECT_GPUS=0; exec "$0" doctor' "$LAUNCH" 2>&1)
  expect_contains "a task bound to another task's GPU: the doctor says so" "task 1 on node1: MISMATCH: GPUDIRECT_GPUS is '0', expected '1'" "$out"
  out=$(srun -N1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo bash -c '[ "$SLURM_LOCALID" = 1 ] && export GPUDIRECT_STEP_GPUS=5,6; exec "$0" doctor' "$LAUNCH" 2>&1)
  expect_contains "a task planned from GPUs that are not its step's: the doctor says so" \
    "task 1 on node1: MISMATCH: GPUDIRECT_STEP_GPUS is '5,6' (the step's GPUs on this node, as the plugin read them), but Slurm gave this task SLURM_STEP_GPUS=0" "$out"
else
  skip "--gpus-per-task=1: the doctor and exec inside each task (OK, the NVLink warning, no container warning, a wrong binding caught)"
fi
out=$(srun -N1 -n2 --gpus-per-task=1 --gpu-direct=tcpxo,verbose true 2>&1)
if [ "$per_task_cgroup" = 1 ]; then
  expect_eq "--gpus-per-task=1: the plugin's verbose line warns on every task" "2" "$(grep -c "sees only its own GPU.*$fix" <<<"$out")"
else
  expect_eq "--gpus-per-task=1 on Slurm $SLURM_VERSION (every task sees both GPUs): no NVLink warning, a binding line per task" "0 2" \
    "$(grep -c "own GPU" <<<"$out") $(grep -c 'gpudirect: node1 task [01] (local [01]): mode tcpxo' <<<"$out")"
fi

# 2. The recommended line: every task sees the node's GPUs (NVLink kept), each bound to its own.
out=$(srun -N1 --ntasks-per-node=2 --gpus-per-node=2 --gpu-direct=tcpxo "$CLUSTER_DIR/show-gpus.sh" 2>&1)
expect_eq "--gpus-per-node --ntasks-per-node: every task sees both GPUs, bound to its own" "task 0 usable=0,1 bound=0
task 1 usable=0,1 bound=1" "$(grep '^task' <<<"$out" | sort)"
if with_launcher; then
  out=$(srun -N1 --ntasks-per-node=2 --gpus-per-node=2 --gpu-direct=tcpxo,verbose "$LAUNCH" doctor 2>&1)
  rc=$?
  [ $rc -eq 0 ] && pass "--gpus-per-node: the doctor exits 0" || fail "--gpus-per-node: the doctor exited $rc" "$out"
  expect_eq "--gpus-per-node: the doctor says OK for both tasks" "2" "$(grep -c ': OK (mode tcpxo' <<<"$out")"
  if grep -q "own GPU" <<<"$out"; then fail "--gpus-per-node: no NVLink warning" "$out"; else pass "--gpus-per-node: no NVLink warning"; fi
else
  skip "--gpus-per-node: the doctor (OK, no NVLink warning)"
fi
summary
