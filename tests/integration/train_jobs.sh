# Shared by the tests and measurements that submit training jobs with sbatch (test_train_requeue.sh,
# test_train_supervised.sh, perf/supervise_vs_requeue.sh), sourced after lib.sh: a job's fields and
# end, a node lost the way a VM vanishes, and a run's JSON lines against an uninterrupted run's.

# job_field JOB FIELD: the field of scontrol show job (JobState, Restarts, NodeList ...)
job_field() { scontrol show job -o "$1" 2>/dev/null | grep -oE "(^| )$2=[^ ]*" | cut -d= -f2; }

# wait_done JOB SECONDS: until the job reaches a final state (passing through requeues); prints it
wait_done() {
  local deadline=$((SECONDS + $2)) state=""
  while [ $SECONDS -lt $deadline ]; do
    state=$(job_field "$1" JobState)
    case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) echo "$state"; return 0 ;; esac
    sleep 0.5
  done
  echo "${state:-gone} after $2 s"
  return 1
}

# lose_node N: node N's links go down first (its peers get no FIN or RST, as when a VM vanishes),
# then everything in its namespace is killed, its slurmd included.
lose_node() {
  local ns link pid
  ns=$(node_netns "$1")
  for link in $(ip -n "$ns" -o link show | awk -F': ' '$2 != "lo" {print $2}' | cut -d@ -f1); do ip -n "$ns" link set "$link" down; done
  for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null; done
}

# same_as_reference REFERENCE JSONL STEPS: every step line of JSONL (every allocation's, every
# attempt's) has the reference's loss, gradient norm and learning rate (a step run twice, after
# resuming from an older checkpoint, must equal it both times), and every step 1..STEPS was done.
same_as_reference() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
def steps(path):
    return [(d["step"], d["loss"], d["grad_norm"], d["lr"]) for d in map(json.loads, open(path)) if d.get("type") == "step"]
ref = {s: v for s, *v in steps(sys.argv[1])}
run = steps(sys.argv[2])
want = int(sys.argv[3])
bad = [(s, v, ref.get(s)) for s, *v in run if ref.get(s) != v]
done = sorted({s for s, *_ in run})
if bad or done != list(range(1, want + 1)):
    print(f"{len(bad)} step(s) differ, first {bad[:2]}; steps done {done[:3]}...{done[-3:]} of {want}")
    sys.exit(1)
print(f"{want} steps equal the reference exactly, {len(run) - len(done)} step(s) run twice")
PY
}
