#!/usr/bin/env bash
# Preemption and requeue driven by the real local Slurm, 3 namespace nodes, the job as users submit
# it (scripts/sbatch/train-local.sbatch: --requeue, --signal, --open-mode=append, requeue on exit 10):
#   1. an operator's `scontrol requeue` mid-run: the job comes back by itself and resumes;
#   2. the time limit: Slurm's --signal before it, the ranks checkpoint, the script requeues;
#   3. a node lost mid-job (its links cut, its slurmd and tasks killed, the node marked down): the
#      survivors end within --timeout naming the node, Slurm requeues the job onto the nodes left and
#      it resumes from the last periodic checkpoint.
# Every case ends with exactly the losses, gradient norms and learning rates of one uninterrupted run
# (the JSON lines of both), and with Slurm's restart count.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/train_jobs.sh"

cluster up --nodes 3 --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster did not start"; exit 1; }
SCRIPT=$SRC/scripts/sbatch/train-local.sbatch
# The schedule is fixed (--lr-steps), so a run of N steps is a prefix of a longer one: one reference
# serves every case. Width 128 x 128 tokens: about 0.1 s a step with 4 ranks on this 2-core machine.
SHAPE=(--width 128 --seq-len 128 --lr-steps 1000 --checkpoint-every 20)
LONG_STEPS=450  # the time-limit case must still be training when the signal comes, up to 35 s in
SHORT_STEPS=120

# The reference: the same ranks, nodes and arguments as the sbatch script's srun, never interrupted.
ref=$CLUSTER_DIR/reference.jsonl
timeout 300 srun -N2 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo --kill-on-bad-exit=1 "$LAUNCH" --timeout 60 train \
  --backend libfabric --preset tiny --steps $LONG_STEPS --threads 1 "${SHAPE[@]}" --checkpoint "$CLUSTER_DIR/reference.ckpt" -J "$ref" >"$CLUSTER_DIR/reference.log" 2>&1 \
  || { fail "the uninterrupted reference run" "$(tail -5 "$CLUSTER_DIR/reference.log")"; summary; exit 1; }

# submit NAME [SBATCH OPTIONS...]: the job id; JSON lines, checkpoint and output under CLUSTER_DIR/NAME.*
submit() {
  local name=$1
  shift
  GPUDIRECT_LAUNCH=$LAUNCH CHECKPOINT=$CLUSTER_DIR/$name.ckpt JSON=$CLUSTER_DIR/$name.jsonl STEPS=${STEPS:-$SHORT_STEPS} TIMEOUT=${TIMEOUT:-60} \
    sbatch --parsable -o "$CLUSTER_DIR/$name.out" "$@" "$SCRIPT" "${SHAPE[@]}"
}
steps_done() { local n; n=$(grep -c '"type":"step"' "$1" 2>/dev/null); echo "${n:-0}"; }
# wait_steps FILE N SECONDS: until FILE holds N step lines
wait_steps() {
  local deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do [ "$(steps_done "$1")" -ge "$2" ] && return 0; sleep 0.2; done
  return 1
}
starts() { python3 -c "import json,sys; print(' '.join(str(json.loads(l).get('resumed_at')) for l in open(sys.argv[1]) if '\"type\":\"start\"' in l))" "$1"; }

# 1. scontrol requeue by an operator, mid-run.
id=$(submit requeue) || { fail "sbatch train-local.sbatch"; summary; exit 1; }
if wait_steps "$CLUSTER_DIR/requeue.jsonl" 40 120; then
  scontrol requeue "$id"
  state=$(wait_done "$id" 180)
  out=$(cat "$CLUSTER_DIR/requeue.out")
  expect_eq "requeued by scontrol, the job comes back by itself and completes" COMPLETED "$state"
  expect_eq "Slurm counts 1 restart" 1 "$(job_field "$id" Restarts)"
  expect_contains "the ranks checkpointed on Slurm's SIGTERM" "(stop signal" "$out"
  expect_contains "the second allocation resumed from it" "gpudirect train: resumed from $CLUSTER_DIR/requeue.ckpt at step" "$out"
  if result=$(same_as_reference "$ref" "$CLUSTER_DIR/requeue.jsonl" $SHORT_STEPS); then pass "requeue: $result (starts at: $(starts "$CLUSTER_DIR/requeue.jsonl"))"; else fail "requeue: losses equal the uninterrupted run's" "$result"; fi
  case "$result" in *" 0 step(s) run twice") pass "requeue: no step was lost or repeated" ;; *) fail "requeue: no step was lost or repeated" "$result" ;; esac
else
  fail "the job trains (40 steps within 120 s)" "$(tail -20 "$CLUSTER_DIR/requeue.out")"
fi

# 2. The time limit (Slurm's minimum, 1 minute): --signal=USR1@25 arrives 5-35 s in (slurmctld
# checks limits every 30 s and signals up to 30 s early); the ranks stop, the script requeues.
id=$(STEPS=$LONG_STEPS submit timelimit --time=1 --signal=USR1@25) || { fail "sbatch --time=1"; summary; exit 1; }
state=$(wait_done "$id" 400)
out=$(cat "$CLUSTER_DIR/timelimit.out")
expect_eq "stopped before its time limit, the job completes in a later allocation" COMPLETED "$state"
stops=$(grep -c "stopped by the preemption signal" <<<"$out")
restarts=$(job_field "$id" Restarts)
if [ "$stops" -ge 1 ] && [ "$restarts" = "$stops" ]; then
  pass "each allocation stopped by --signal requeued itself ($stops stop(s), Slurm counts $restarts restart(s))"
else
  fail "each allocation stopped by --signal requeued itself" "stops: $stops, restarts: $restarts
$(tail -20 <<<"$out")"
fi
if result=$(same_as_reference "$ref" "$CLUSTER_DIR/timelimit.jsonl" $LONG_STEPS); then pass "time limit: $result (starts at: $(starts "$CLUSTER_DIR/timelimit.jsonl"))"; else fail "time limit: losses equal the uninterrupted run's" "$result"; fi

# 3. A node lost mid-job: node2's links go down first (its peers get no FIN or RST, as when a VM
# vanishes), then everything in its namespace is killed. The survivors must end within --timeout.
id=$(TIMEOUT=10 submit nodeloss) || { fail "sbatch (node loss)"; summary; exit 1; }
if wait_steps "$CLUSTER_DIR/nodeloss.jsonl" 50 120; then
  first_nodes=$(job_field "$id" NodeList)
  lost=$SECONDS
  lose_node 2
  deadline=$((SECONDS + 40))
  while [ $SECONDS -lt $deadline ] && ! grep -q "node2" <(grep -iE "error|fail|lost|timed out|no progress" "$CLUSTER_DIR/nodeloss.out"); do sleep 0.2; done
  took=$((SECONDS - lost))
  out=$(cat "$CLUSTER_DIR/nodeloss.out")
  failure=$(grep -iE "error|fail|lost|timed out|no progress" <<<"$out" | grep node2 | head -1)
  if [ -n "$failure" ] && [ $took -le 15 ]; then pass "the survivors ended in $took s (--timeout 10) naming node2: $failure"; else fail "the survivors end within --timeout naming node2 (${took} s)" "$(tail -15 <<<"$out")"; fi
  scontrol update nodename=node2 state=down reason="requeue test: node lost"
  state=$(wait_done "$id" 180)
  out=$(cat "$CLUSTER_DIR/nodeloss.out")
  grep -vE '^(step |      slow rank)' <<<"$out" | sed 's/^/     | /'
  expect_eq "with node2 down the job is requeued and completes" COMPLETED "$state"
  expect_eq "Slurm counts 1 restart" 1 "$(job_field "$id" Restarts)"
  expect_eq "the first allocation had node2" "node[1-2]" "$first_nodes"
  expect_contains "the second allocation runs on the nodes left" "train-local: allocation 2 of job $id on node[1,3]" "$out"
  if result=$(same_as_reference "$ref" "$CLUSTER_DIR/nodeloss.jsonl" $SHORT_STEPS); then pass "node loss: $result (starts at: $(starts "$CLUSTER_DIR/nodeloss.jsonl"))"; else fail "node loss: losses equal the uninterrupted run's" "$result"; fi
else
  fail "the job trains (50 steps within 120 s)" "$(tail -20 "$CLUSTER_DIR/nodeloss.out")"
fi

echo "     took $SECONDS s"
summary
