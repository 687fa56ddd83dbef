#!/usr/bin/env bash
# Training that heals itself inside its allocation (`gpudirect-launch supervise`, run by
# scripts/sbatch/train-supervised-local.sbatch) on the real local Slurm: 6 namespace nodes, 4
# training with 2 ranks each and 2 spares, the tiny preset on the CPU model.
#   1. One run, two faults: node2 is lost mid-run (its links cut, everything in it killed), later
#      node3's data NICs are rate limited (tc): the supervisor names each (the ranks' reports; the
#      pair test when every step slows alike), drains node2 `unspecified` and node3 `PERFORMANCE`,
#      trains on with both spares and finishes with exactly the losses of an uninterrupted run; no
#      healthy node is drained, and the goodput report agrees with the wall clock.
#   2. A fault during a checkpoint write (rank 0 killed while its fsync is held up), which the node
#      check clears: transient, the same nodes go on from the previous checkpoint; the checkpoint
#      writes (slowed past the hang allowance) are not taken for hangs. Then node4 is lost and the
#      first spare fails check-node (an uncorrected ECC error): drained `XID`, the next spare trains.
#   3. A step Slurm cannot create is no node fault: two tries, then exit 1, nothing drained. A lost
#      node with no spare left: the supervisor stops with exit 11, naming what happened.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/check_node_env.sh"
source "$(dirname "$0")/train_jobs.sh"
with_launcher || { skip "supervise (no gpudirect-launch in this build)"; summary; exit 0; }

NODES=6
cluster up --nodes $NODES --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster did not start"; exit 1; }
check_node_env $NODES
# supervise runs PROGRAM check-node --machine-type local-a3mega --json: check-node.sh gives the first three itself.
printf '#!/bin/bash\n[ "$1" = check-node ] && shift\n[ "$1" = --machine-type ] && shift 2\nexec %s "$@"\n' "$CLUSTER_DIR/check-node.sh" >"$CLUSTER_DIR/supervise-check-node.sh"
chmod +x "$CLUSTER_DIR/supervise-check-node.sh"

SCRIPT=$SRC/scripts/sbatch/train-supervised-local.sbatch
# A fixed schedule (--lr-steps): a run of N steps is a prefix of a longer one, so one reference
# serves every case. The tiny shape: tens of ms a step with 8 ranks on this 2-core machine.
SHAPE=(--lr-steps 2000)
STEPS_1=360
SWEEP="--sweep-arg=--gpus-per-task=1 --sweep-arg=--gpu-direct=tcpxo --sweep-arg=-b --sweep-arg=512K --sweep-arg=-e --sweep-arg=512K --sweep-arg=-n --sweep-arg=3 --sweep-arg=-w --sweep-arg=1 --sweep-arg=--median-factor --sweep-arg=0.2 --sweep-arg=--pair-timeout --sweep-arg=60"
CHECKS="--node-check local-a3mega --node-check-program $CLUSTER_DIR/supervise-check-node.sh --check-timeout 20"
# The straggler rule is off (the sbatch script's STRAGGLER_STEPS=0): on 2 shared cores any rank may
# compute slowest for a few steps in a row.
RULES="--slow-steps 5 --slow-factor 5 --baseline-steps 10 --start-timeout 60 --checkpoint-timeout 30"

ref=$CLUSTER_DIR/reference.jsonl
timeout 300 srun -N4 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo --kill-on-bad-exit=1 "$LAUNCH" --timeout 60 train \
  --backend libfabric --preset tiny --steps $STEPS_1 --threads 1 "${SHAPE[@]}" --checkpoint "$CLUSTER_DIR/reference.ckpt" -J "$ref" >"$CLUSTER_DIR/reference.log" 2>&1 \
  || { fail "the uninterrupted reference run" "$(tail -5 "$CLUSTER_DIR/reference.log")"; summary; exit 1; }

# submit NAME STEPS [SBATCH OPTIONS...]: the job id; JSON lines, checkpoint and output under CLUSTER_DIR/NAME.*
submit() {
  local name=$1 steps=$2
  shift 2
  GPUDIRECT_LAUNCH=$LAUNCH CHECKPOINT=$CLUSTER_DIR/$name.ckpt JSON=$CLUSTER_DIR/$name.jsonl STEPS=$steps TIMEOUT=${TIMEOUT:-5} \
    SUPERVISE_ARGS="$RULES --hang-min ${HANG_MIN:-8} $CHECKS $SWEEP --metrics-file $CLUSTER_DIR/$name.prom ${EXTRA:-}" sbatch --parsable -o "$CLUSTER_DIR/$name.out" "$@" "$SCRIPT" "${SHAPE[@]}" --checkpoint-every "${EVERY:-20}"
}
last_step() { python3 -c "import json,sys; print(max([json.loads(l)['step'] for l in open(sys.argv[1]) if '\"type\":\"step\"' in l] or [0]))" "$1" 2>/dev/null || echo 0; }
# wait_step FILE N SECONDS: until FILE holds a step line numbered N or more
wait_step() {
  local deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do [ "$(last_step "$1")" -ge "$2" ] && return 0; sleep 0.2; done
  return 1
}
reason_of() { sinfo -h -N -n "$1" -o '%E' | head -1; }
comment_of() { scontrol show node "$1" | sed -n 's/^ *Comment=//p'; }
drained_nodes() { sinfo -h -N -o '%N %T' | awk '$2 ~ /drain/ {print $1}' | sort -uV | tr '\n' ' '; }
# events JSONL TYPE: the supervisor's lines of that type, one compact JSON per line
events() { python3 -c "import json,sys; [print(json.dumps({k: v for k, v in d.items() if k != 'unix_time'}, sort_keys=True)) for d in map(json.loads, open(sys.argv[1])) if d.get('type') == sys.argv[2]]" "$1" "$2"; }

# CASES=23 runs a subset (while working on one case).
case_on() { [[ "${CASES:-123}" == *$1* ]]; }

# 1. node2 lost, then node3's NICs slowed.
if case_on 1; then
SLOW=node3
nics=$(timeout 60 srun -N1 -w $SLOW --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo sh -c 'echo ${GPUDIRECT_NICS%%,*}' 2>&1 | sort -u)
grep -qE '^enp[0-9]+s0$' <<<"$nics" || { fail "the plugin names node3's data NICs" "$nics"; summary; exit 1; }
submitted=$(date +%s.%N)
id=$(submit run1 $STEPS_1) || { fail "sbatch train-supervised-local.sbatch"; summary; exit 1; }
if wait_step "$CLUSTER_DIR/run1.jsonl" 60 180; then
  lose_node 2
  echo "     node2 lost at step $(last_step "$CLUSTER_DIR/run1.jsonl")"
  # The restart on the spare is through when steps come from attempt 2; then 40 more steps.
  deadline=$((SECONDS + 120))
  until grep -q '"type":"restart"' "$CLUSTER_DIR/run1.jsonl" 2>/dev/null || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
  at=$(last_step "$CLUSTER_DIR/run1.jsonl")
  if wait_step "$CLUSTER_DIR/run1.jsonl" $((at + 60)) 120; then
    for nic in $nics; do
      ip netns exec "$(node_netns 3)" tc qdisc replace dev "$nic" root netem rate 4mbit 2>/dev/null ||
        ip netns exec "$(node_netns 3)" tc qdisc replace dev "$nic" root tbf rate 4mbit burst 64kb latency 1s
    done
    echo "     $SLOW's NICs ($(echo $nics)) limited to 4 Mbit/s at step $(last_step "$CLUSTER_DIR/run1.jsonl")"
  else
    fail "attempt 2 trains after node2's loss" "$(tail -20 "$CLUSTER_DIR/run1.out")"
  fi
  state=$(wait_done "$id" 400)
  ended=$(date +%s.%N)
  for nic in $nics; do ip netns exec "$(node_netns 3)" tc qdisc del dev "$nic" root 2>/dev/null; done
  out=$(cat "$CLUSTER_DIR/run1.out")
  grep -E '^gpudirect supervise: ' <<<"$out" | grep -v ': attempt [0-9]* on ' | sed 's/^/     | /'
  expect_eq "the job completes in its one allocation" "COMPLETED 0" "$state $(job_field "$id" Restarts)"
  if result=$(same_as_reference "$ref" "$CLUSTER_DIR/run1.jsonl" $STEPS_1); then pass "two faults: $result"; else fail "two faults: losses equal the uninterrupted run's" "$result"; fi
  # The ranks name node2, or its neighbours stalled waiting for it: every training node is checked.
  expect_contains "node2 found by its check: it gives no answer" "gpudirect supervise: node2 gives no answer" "$out"
  expect_contains "the slow steps seen" "slow steps: 5 consecutive steps over 5x the normal step" "$out"
  expect_contains "the pair test names node3" "gpudirect supervise: node3 passes check-node, but the pair test measured it slow: taken out (PERFORMANCE)" "$out"
  expect_eq "drained: node2 and node3, no healthy node" "node2 node3 " "$(drained_nodes)"
  expect_eq "node2's reason: unspecified (it gave no answer)" "unspecified" "$(reason_of node2)"
  expect_eq "node3's reason: PERFORMANCE" "PERFORMANCE" "$(reason_of node3)"
  expect_contains "node3's comment holds the pair test's measurement" "gpudirect health: all_gather" "$(comment_of node3)"
  expect_eq "the restarts: node5, then node6 in" '{"attempt": 2, "nodes": ["node1", "node3", "node4", "node5"], "spares": ["node6"], "type": "restart"}
{"attempt": 3, "nodes": ["node1", "node4", "node5", "node6"], "spares": [], "type": "restart"}' "$(events "$CLUSTER_DIR/run1.jsonl" restart)"
  # The goodput line against the wall clock: the supervisor's wall time lies inside the job's
  # (submission to the test seeing it end), productive + lost time fit in it, ETTR is their ratio.
  if check=$(python3 - "$CLUSTER_DIR/run1.jsonl" "$submitted" "$ended" <<'PY'
import json, sys
g = [d for d in map(json.loads, open(sys.argv[1])) if d.get("type") == "goodput"][-1]
outer = float(sys.argv[3]) - float(sys.argv[2])
problems = []
if not (0.5 * outer < g["wall_s"] <= outer + 1): problems.append(f"wall {g['wall_s']:.1f} s outside the job's {outer:.1f} s")
if g["productive_s"] + g["lost_s"] > g["wall_s"] + 0.5: problems.append("productive + lost exceed the wall time")
if abs(g["ettr"] - g["productive_s"] / g["wall_s"]) > 1e-9: problems.append("ettr is not productive / wall")
kinds = [f["kind"] for f in g["faults"]]
if kinds != ["rank failure", "slow steps"]: problems.append(f"faults {kinds}")
if [f["reason"] for f in g["faults"]] != ["unspecified", "PERFORMANCE"]: problems.append("reasons")
if g["faults"][1]["repeated_steps"] != 0: problems.append("the slow node's stop repeated steps")
print("; ".join(problems) if problems else
      f"wall {g['wall_s']:.1f} s of the job's {outer:.1f} s, productive {g['productive_s']:.1f} s, ETTR {g['ettr']:.3f}, lost per fault "
      + ", ".join(f"{f['kind']} {f['lost_s']:.1f} s" for f in g["faults"]))
sys.exit(1 if problems else 0)
PY
  ); then pass "goodput agrees with the wall clock: $check"; else fail "goodput agrees with the wall clock" "$check"; fi
  metrics=$(cat "$CLUSTER_DIR/run1.prom" 2>/dev/null)
  if command -v promtool >/dev/null; then
    if check=$(promtool check metrics <"$CLUSTER_DIR/run1.prom" 2>&1); then pass "--metrics-file passes promtool check metrics"; else fail "promtool check metrics" "$check"; fi
  fi
  expect_contains "the metrics: the ETTR" "gpudirect_supervise_ettr_ratio{job_id=\"$id\"} 0." "$metrics"
  expect_contains "the metrics: node3 drained for PERFORMANCE" "gpudirect_supervise_drained_nodes{job_id=\"$id\",reason=\"PERFORMANCE\"} 1" "$metrics"
  expect_contains "the metrics: no spare left" "gpudirect_supervise_spare_nodes{job_id=\"$id\"} 0" "$metrics"
else
  fail "the job trains (60 steps within 180 s)" "$(tail -20 "$CLUSTER_DIR/run1.out")"
fi
fi

# A fresh cluster for the next case: node2 lost and node3 limited are back, every node in service.
restart_cluster() {
  cluster up --nodes $NODES --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { fail "the cluster restarts"; summary; exit 1; }
  check_node_env $NODES
  for i in $(seq 1 $NODES); do scontrol update nodename=node$i state=resume 2>/dev/null; done
  wait_nodes_responding
}

# 2. A fault during a checkpoint write, cleared by the check; then a lost node and a bad spare.
# Every checkpoint's fsync (every 40 steps) is held up 6 s (tests/slow_fsync), past the 4 s hang allowance: only
# the checkpoint allowance keeps the supervisor from taking the writes for hangs. The ranks wait
# for rank 0's write in a collective: their --timeout (10 s) must outlast it.
if case_on 2; then
restart_cluster
echo "gpu 1 ecc_volatile 1" >>"$CLUSTER_DIR/node/node5/nvml.conf"
STEPS_2=160
slowed="--srun-arg=--export=ALL,LD_PRELOAD=$BUILD/tests/libslow_fsync.so,SLOW_FSYNC_MATCH=.run2.ckpt.tmp.,SLOW_FSYNC_SECONDS=6"
id=$(EXTRA=$slowed HANG_MIN=4 TIMEOUT=10 EVERY=40 submit run2 $STEPS_2) || { fail "sbatch (run 2)"; summary; exit 1; }
if wait_step "$CLUSTER_DIR/run2.jsonl" 80 180; then
  # The checkpoint after step 80: its temporary file appears, rank 0 sits in fsync; end rank 0.
  deadline=$((SECONDS + 20))
  tmp=""
  while [ -z "$tmp" ] && [ $SECONDS -lt $deadline ]; do tmp=$(find "$CLUSTER_DIR" -maxdepth 1 -name '.run2.ckpt.tmp.*' | head -1); sleep 0.05; done
  at=$(last_step "$CLUSTER_DIR/run2.jsonl")
  rank0=""
  for pid in $(ip netns pids "$(node_netns 1)"); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx SLURM_PROCID=0 && grep -q train "/proc/$pid/cmdline" 2>/dev/null && grep -q run2.ckpt "/proc/$pid/cmdline" && rank0=$pid
  done
  if [ -n "$tmp" ] && [ -n "$rank0" ]; then
    kill -9 "$rank0"
    pass "rank 0 (pid $rank0 on node1) killed while writing the checkpoint after step $at ($(basename "$tmp") in flight)"
  else
    fail "rank 0 is caught writing a checkpoint" "temporary file: '${tmp:-none}', rank 0: '${rank0:-not found}'"
  fi
  deadline=$((SECONDS + 120))
  until [ "$(grep -c '"type":"launch"' "$CLUSTER_DIR/run2.jsonl")" -ge 2 ] || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
  if wait_step "$CLUSTER_DIR/run2.jsonl" $((at + 20)) 120; then
    lose_node 4
    echo "     node4 lost at step $(last_step "$CLUSTER_DIR/run2.jsonl")"
  else
    fail "attempt 2 trains after the transient fault" "$(tail -20 "$CLUSTER_DIR/run2.out")"
  fi
  state=$(wait_done "$id" 400)
  out=$(cat "$CLUSTER_DIR/run2.out")
  grep -E '^gpudirect (supervise|train): (resumed|[^a])' <<<"$out" | grep -vE ': attempt [0-9]* on |checkpoint .* written' | sed 's/^/     | /'
  expect_eq "run 2 completes in its one allocation" "COMPLETED 0" "$state $(job_field "$id" Restarts)"
  if result=$(same_as_reference "$ref" "$CLUSTER_DIR/run2.jsonl" $STEPS_2); then pass "fault in a checkpoint write, lost node, bad spare: $result"; else fail "run 2: losses equal the uninterrupted run's" "$result"; fi
  expect_contains "the check clears node1: transient" "gpudirect supervise: node1 passes its check: a transient fault, trying the same nodes again (once)" "$out"
  expect_contains "the interrupted write left the previous checkpoint: resumed at step 40" "gpudirect train: resumed from $CLUSTER_DIR/run2.ckpt at step 40" "$out"
  [ -n "$tmp" ] && [ -e "$tmp" ] && pass "the interrupted write's temporary file is left, never renamed over the checkpoint" || fail "the interrupted write's temporary file is left" "$tmp"
  # Five 4 s writes, one hang: node4's loss (found before the ranks' own 10 s timeout).
  expect_eq "no 6 s checkpoint write taken for a hang (allowance 4 s): the one hang is node4's loss" \
    "rank failure:node1 hang:" "$(python3 -c "import json,sys; print(' '.join(d['kind'] + ':' + ','.join(d['blamed']) for d in map(json.loads, open(sys.argv[1])) if d.get('type') == 'fault'))" "$CLUSTER_DIR/run2.jsonl")"
  expect_contains "the first spare fails its check" "gpudirect supervise: spare node5 fails check-node (XID): gpudirect check-node: GPU 1 (00000000:05:00.0): uncorrected ECC errors since the driver loaded 1, expected 0" "$out"
  expect_eq "drained: node4 (unspecified) and the bad spare node5 (XID); node1 not" "node4:unspecified node5:XID " "$(for n in $(drained_nodes); do printf '%s:%s ' "$n" "$(reason_of "$n")"; done)"
  expect_eq "the restarts: the same nodes, then node6 in" '{"attempt": 2, "nodes": ["node1", "node2", "node3", "node4"], "spares": ["node5", "node6"], "type": "restart"}
{"attempt": 3, "nodes": ["node1", "node2", "node3", "node6"], "spares": [], "type": "restart"}' "$(events "$CLUSTER_DIR/run2.jsonl" restart)"
else
  fail "run 2 trains (80 steps within 180 s)" "$(tail -20 "$CLUSTER_DIR/run2.out")"
fi

fi

# 3. No spare left: a lost node ends the supervision with exit 11 and a line saying so; the sbatch
# script requeues the job (which this test then cancels).
if case_on 3; then
restart_cluster
# First a step Slurm cannot even create (more CPUs per task than a node has): that is no node
# fault, so after two tries on nodes that pass their checks the supervisor stops, draining nothing.
id=$(EXTRA=--srun-arg=--cpus-per-task=64 submit cannot 50) || { fail "sbatch (a step that cannot start)"; summary; exit 1; }
state=$(wait_done "$id" 120)
out=$(cat "$CLUSTER_DIR/cannot.out")
expect_contains "a step that cannot start: the supervisor stops, naming it no node fault" \
  "gpudirect supervise: the training step failed twice before its first step on nodes that pass their checks: that is no node fault" "$out"
expect_eq "a step that cannot start: 2 attempts, nothing drained, the job fails" "2 FAILED" "$(grep -c 'gpudirect supervise: attempt [0-9]* on' <<<"$out") $state$(drained_nodes)"
id=$(SPARE_NODES=0 submit run3 $STEPS_1 --nodes=2) || { fail "sbatch (run 3)"; summary; exit 1; }
if wait_step "$CLUSTER_DIR/run3.jsonl" 20 180; then
  lose_node 2
  deadline=$((SECONDS + 90))
  until grep -q "supervisor exit 11" "$CLUSTER_DIR/run3.out" 2>/dev/null || [ $SECONDS -ge $deadline ]; do sleep 0.5; done
  scancel "$id" 2>/dev/null
  out=$(cat "$CLUSTER_DIR/run3.out")
  expect_contains "no spare: the supervisor says so" "gpudirect supervise: no spare node left to replace node2 (1 of 2 training nodes healthy): stopping, the checkpoint $CLUSTER_DIR/run3.ckpt holds the progress; exit 11 for the sbatch script to requeue" "$out"
  expect_contains "no spare: the sbatch script requeues on exit 11" "train-supervised-local: supervisor exit 11" "$out"
else
  fail "run 3 trains (20 steps within 180 s)" "$(tail -20 "$CLUSTER_DIR/run3.out")"
fi
fi

echo "     took $SECONDS s"
summary
