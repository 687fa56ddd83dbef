#!/usr/bin/env bash
# A node fault with `supervise` beside today's requeue path, on the real local cluster (6 namespace
# nodes, Slurm's default credential lifetime of 120 s unless CRED_EXPIRE says otherwise): the same
# training (8 ranks on 4 nodes, the tiny preset on the CPU model, a checkpoint every 20 steps), the
# same two faults at the same steps, measured by the wall clock.
#   A. supervised, no fault          scripts/sbatch/train-supervised-local.sbatch (4 nodes + 2 spares)
#   B. supervised, two faults        node2 lost at 25% of the steps; node3's data NICs limited to
#                                    4 Mbit/s once the run is 20% of the steps past the restart
#   C. requeue path, no fault        scripts/sbatch/train-local.sbatch --nodes=4
#   D. requeue path, the same faults node2 lost (and marked down at once, as an operator or a health
#                                    check would: otherwise the job fails before Slurm's SlurmdTimeout
#                                    declares it, and is not requeued at all); node3 slowed at the same
#                                    step as in B, which nothing on this path acts on
# Time lost to a fault, from a timeline of when each step line appeared (polled every 50 ms):
#   node loss: from the last step before the loss until that step's successor is done, less one
#              normal step (the one in flight would have taken that anyway);
#   slow NIC:  from the last step before the limit to the run's last step, less that many normal steps.
# The normal step is the unfaulted run's time from its first step line to its last, per step, on
# the same path. ETTR here is steps x normal step / wall time (sbatch to the job's end), the same
# for both paths. Every run's timeline, marks, output and JSON lines stay in RESULTS (default
# ./supervise-vs-requeue-DATE).
#   sudo perf/supervise_vs_requeue.sh [STEPS]      (default 360, the integration test's size)
#   PATHS=supervised sudo perf/supervise_vs_requeue.sh 5000   (A and B only: a long run, where the
#                                    requeue path's slowed node would take an hour to finish)
set -uo pipefail
export GPUDIRECT_SOURCE_DIR=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
source "$GPUDIRECT_SOURCE_DIR/tests/integration/lib.sh"
source "$GPUDIRECT_SOURCE_DIR/tests/integration/check_node_env.sh"
source "$GPUDIRECT_SOURCE_DIR/tests/integration/train_jobs.sh"
STEPS=${1:-360}
RESULTS=${RESULTS:-$PWD/supervise-vs-requeue-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RESULTS"
PATHS=${PATHS:-supervised requeue}
CRED_EXPIRE=${CRED_EXPIRE:-120}
NODES=6

restart_cluster() {
  cluster up --nodes $NODES --cred-expire "$CRED_EXPIRE" --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null ||
    { echo "cluster did not start"; exit 1; }
  check_node_env $NODES
  for i in $(seq 1 $NODES); do scontrol update nodename=node$i state=resume 2>/dev/null; done
  wait_nodes_responding
}
restart_cluster
printf '#!/bin/bash\n[ "$1" = check-node ] && shift\n[ "$1" = --machine-type ] && shift 2\nexec %s "$@"\n' "$CLUSTER_DIR/check-node.sh" >"$CLUSTER_DIR/supervise-check-node.sh"
chmod +x "$CLUSTER_DIR/supervise-check-node.sh"
SUPERVISE_ARGS="--slow-steps 5 --slow-factor 5 --baseline-steps 10 --hang-min 8 --start-timeout 60 --checkpoint-timeout 30"
SUPERVISE_ARGS+=" --node-check local-a3mega --node-check-program $CLUSTER_DIR/supervise-check-node.sh --check-timeout 20"
for arg in --gpus-per-task=1 --gpu-direct=tcpxo -b 512K -e 512K -n 3 -w 1 --median-factor 0.2 --pair-timeout 60; do SUPERVISE_ARGS+=" --sweep-arg=$arg"; done
TRAIN=(--lr-steps 2000 --checkpoint-every 20)

# The wall time at which each step line appears in a JSON lines file, as "seconds step".
cat >"$CLUSTER_DIR/timeline.py" <<'PY'
import json, os, sys, time
path, out, stop = sys.argv[1:4]
seen, offset, partial = 0, 0, ""
with open(out, "w") as timeline:
    while not os.path.exists(stop):
        if os.path.exists(path):
            with open(path) as f:
                f.seek(offset)
                chunk = f.read()
                offset += len(chunk)
            partial += chunk
            *lines, partial = partial.split("\n")
            for line in lines:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                if d.get("type") == "step":
                    timeline.write(f"{time.time():.3f} {d['step']}\n")
                    timeline.flush()
        time.sleep(0.05)
PY
last_step() { awk 'END {print $2 + 0}' "$1" 2>/dev/null || echo 0; }
wait_step() {  # TIMELINE STEP SECONDS
  local deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do [ "$(last_step "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  return 1
}
# node3's data NICs, as the plugin gives them to its ranks (asked before any training job holds it).
NODE3_NICS=$(timeout 60 srun -N1 -w node3 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo sh -c 'echo ${GPUDIRECT_NICS%%,*}' 2>/dev/null | sort -u)
[ -n "$NODE3_NICS" ] || { echo "the plugin named no data NIC for node3"; exit 1; }
slow_node3() {
  local nic
  for nic in $NODE3_NICS; do
    ip netns exec "$(node_netns 3)" tc qdisc replace dev "$nic" root netem rate 4mbit 2>/dev/null ||
      ip netns exec "$(node_netns 3)" tc qdisc replace dev "$nic" root tbf rate 4mbit burst 64kb latency 1s
  done
}

# run NAME PATH FAULTS: submits, injects the faults (yes/no) and writes NAME.times (submit, end) and
# NAME.timeline, NAME.marks ("loss STEP TIME", "slow STEP TIME").
run() {
  local name=$1 path=$2 faults=$3 id submitted loss_at slow_after state
  local json=$CLUSTER_DIR/$name.jsonl timeline=$CLUSTER_DIR/$name.timeline
  rm -f "$CLUSTER_DIR/$name.stop"
  python3 "$CLUSTER_DIR/timeline.py" "$json" "$timeline" "$CLUSTER_DIR/$name.stop" &
  local monitor=$!
  submitted=$(date +%s.%N)
  if [ "$path" = supervised ]; then
    id=$(GPUDIRECT_LAUNCH=$LAUNCH CHECKPOINT=$CLUSTER_DIR/$name.ckpt JSON=$json STEPS=$STEPS TIMEOUT=5 SUPERVISE_ARGS=$SUPERVISE_ARGS \
      sbatch --parsable -o "$CLUSTER_DIR/$name.out" "$SRC/scripts/sbatch/train-supervised-local.sbatch" "${TRAIN[@]}")
  else
    id=$(GPUDIRECT_LAUNCH=$LAUNCH CHECKPOINT=$CLUSTER_DIR/$name.ckpt JSON=$json STEPS=$STEPS TIMEOUT=5 \
      sbatch --parsable --nodes=4 -o "$CLUSTER_DIR/$name.out" "$SRC/scripts/sbatch/train-local.sbatch" "${TRAIN[@]}")
  fi
  : >"$CLUSTER_DIR/$name.marks"
  if [ "$faults" = yes ]; then
    loss_at=$((STEPS / 4))
    wait_step "$timeline" $loss_at 300 && lose_node 2
    echo "loss $(date +%s.%N)" >>"$CLUSTER_DIR/$name.marks"
    [ "$path" = requeue ] && scontrol update nodename=node2 state=down reason="perf: node lost"
    # node3 is slowed once the run is back past the loss and 20% of the steps further.
    slow_after=$((loss_at + STEPS / 5))
    wait_step "$timeline" $slow_after 600 && slow_node3
    echo "slow $(date +%s.%N)" >>"$CLUSTER_DIR/$name.marks"
  fi
  state=$(wait_done "$id" 3600)
  echo "$submitted $(date +%s.%N) $state $(job_field "$id" Restarts)" >"$CLUSTER_DIR/$name.times"
  touch "$CLUSTER_DIR/$name.stop"
  wait $monitor
  cp "$CLUSTER_DIR/$name".{timeline,marks,times,out,jsonl} "$RESULTS/" 2>/dev/null
  echo "  $name: job $id $state after $(awk '{printf "%.1f", $2 - $1}' "$CLUSTER_DIR/$name.times") s ($(last_step "$timeline") steps)"
}

echo "supervise vs requeue: $STEPS steps, cred_expire $CRED_EXPIRE s, SlurmdTimeout 30 s (Slurm's default 300)"
for path in $PATHS; do
  run $path-clean $path no
  restart_cluster
  run $path-faults $path yes
  restart_cluster
done

python3 - "$RESULTS" "$STEPS" $PATHS <<'PY'
import statistics, sys
d, steps, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def timeline(name):
    return [(float(t), int(s)) for t, s in (l.split() for l in open(f"{d}/{name}.timeline"))]
def times(name):
    a, b, state, restarts = open(f"{d}/{name}.times").read().split()
    return float(a), float(b), state, restarts
def pace(name):  # per step, from the first step line to the last (the lines come in bursts)
    tl = timeline(name)
    return (tl[-1][0] - tl[0][0]) / (tl[-1][1] - tl[0][1])
def marks(name):
    return {k: float(t) for k, t in (l.split() for l in open(f"{d}/{name}.marks"))}
rows = []
for path in paths:
    p = pace(f"{path}-clean")
    clean0, clean1, *_ = times(f"{path}-clean")
    f0, f1, state, restarts = times(f"{path}-faults")
    tl, m = timeline(f"{path}-faults"), marks(f"{path}-faults")
    def done(step, after):  # when `step` was first done after time `after`
        return min(t for t, s in tl if s == step and t >= after)
    # The last step done before the fault (its line may come up to 0.1 s late), then when the run
    # was first past it again.
    t1 = m["loss"]
    before1, s1 = max((t, s) for t, s in tl if t <= t1 + 0.2)
    lost1 = done(s1 + 1, before1 + 0.3) - before1 - p
    t2 = m["slow"]
    before2, s2 = max((t, s) for t, s in tl if t <= t2)
    end = max(t for t, s in tl if s == steps)
    lost2 = end - before2 - (steps - s2) * p
    print(f"{path}: node lost after step {s1}, past it again {done(s1 + 1, before1 + 0.3) - before1:.1f} s later; "
          f"node3 slowed after step {s2}, {steps - s2} steps in {end - before2:.1f} s")
    rows.append((path, p, clean1 - clean0, f1 - f0, lost1, lost2, steps * p / (clean1 - clean0), steps * p / (f1 - f0), state, restarts))
print(f"| path | normal step | wall, no fault | wall, 2 faults | lost: node loss | lost: slow NIC | ETTR no fault | ETTR 2 faults | ratio |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for path, p, wc, wf, l1, l2, e0, e1, state, restarts in rows:
    print(f"| {path} | {p*1e3:.0f} ms | {wc:.1f} s | {wf:.1f} s ({state}, restarts {restarts}) | {l1:.1f} s | {l2:.1f} s | {e0:.3f} | {e1:.3f} | {e1/e0:.2f} |")
if len(rows) == 2:
    (_, _, _, _, s1, s2, *_), (_, _, _, _, r1, r2, *_) = rows
    print(f"time lost per fault, supervised / requeue: node loss {s1/r1:.2f}, slow NIC {s2/r2:.2f}")
PY
