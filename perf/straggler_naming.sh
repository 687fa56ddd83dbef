#!/usr/bin/env bash
# Naming the straggler: how often each rule names a rank that is stopped (SIGSTOP) for a while.
#   train: 3 local ranks (tiny preset made 4 layers of width 256, T 128: steps of about 0.2 s, mostly
#          compute, on the 2-core VM); rank 2 is stopped STOP_S seconds, STOPS times, between
#          pauses; for every step the stop made long, which rank the wall step time would name and
#          which rank the compute-time rule (train's straggler) named.
#   bench: 3 local ranks, all_reduce of 1 MiB for 4000 iterations; rank 2 is stopped once STOP_S s
#          inside the timed loop; every rank's time per call and whom bench's rule named.
#   perf/straggler_naming.sh [BUILD_DIR]      (default build/release; STOPS=9 STOP_S=0.4)
# Run it on an otherwise idle machine: a busy one makes its own stragglers.
set -euo pipefail
build=${1:-build/release}
stops=${STOPS:-9}
stop_s=${STOP_S:-0.4}
launch=$(readlink -f "$build/launcher/gpudirect-launch")
[ -x "$launch" ] || { echo "straggler_naming.sh: no $build/launcher/gpudirect-launch (build first)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT

# rank_pid MARKER RANK: the --np child running rank RANK of the command line containing MARKER.
rank_pid() {
  local p
  for p in $(pgrep -f -- "$1"); do
    [ "$(readlink -f /proc/"$p"/exe 2>/dev/null)" = "$launch" ] || continue
    if grep -qx "GPUDIRECT_LAUNCH_RANK=$2" < <(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null); then echo "$p"; return; fi
  done
}

# stop_rank PID: SIGSTOP for stop_s seconds, then SIGCONT.
stop_rank() { kill -STOP "$1" && sleep "$stop_s" && kill -CONT "$1"; }

# --- train ---
# Runs until SIGTERM after the last stop (it then finishes its step and exits 10).
"$launch" --np 3 train --backend libfabric --preset tiny --layers 4 --width 256 --seq-len 128 --threads 1 --steps 1000000 --data mock -J "$work/train.jsonl" >"$work/train.log" 2>&1 &
job=$!
for _ in $(seq 1 300); do
  seen=$(grep -c '"type":"step"' "$work/train.jsonl" 2>/dev/null || true)
  [ "${seen:-0}" -ge 5 ] && break
  sleep 0.2
done
victim=$(rank_pid "train --backend libfabric --preset tiny --layers 4" 2)
[ -n "$victim" ] || { echo "straggler_naming.sh: rank 2 of the training run not found" >&2; exit 1; }
for i in $(seq 1 "$stops"); do
  echo "train: stop $i/$stops of rank 2 (pid $victim) for $stop_s s" >&2
  stop_rank "$victim"; sleep 1
done
kill -TERM "$job"
wait $job || true

python3 - "$work/train.jsonl" "$stop_s" <<'PY'
import json, statistics, sys
steps = [s for s in map(json.loads, open(sys.argv[1])) if s.get("type") == "step"][1:]
normal = statistics.median(s["step_ms"] for s in steps)
# A step the stop made long: more than half the stop longer than the median step.
long = [s for s in steps if s["step_ms"] > normal + float(sys.argv[2]) * 500]
wall = sum(1 for s in long if max(range(3), key=lambda r: s["rank_step_ms"][r]) == 2)
named = [s["straggler"]["rank"] if s["straggler"] else None for s in long]
print(f"train, 3 ranks, tiny preset with 4 layers of width 256, T 128: median step {normal:.0f} ms; {len(long)} steps made long by the stops "
      f"({min((s['step_ms'] for s in long), default=0):.0f}-{max((s['step_ms'] for s in long), default=0):.0f} ms)")
print(f"  wall step time's slowest rank is rank 2 in {wall} of {len(long)}")
print(f"  the compute-time rule named rank 2 in {named.count(2)}, nobody in {named.count(None)}, "
      f"another rank in {len(named) - named.count(2) - named.count(None)}")
PY

# --- bench ---
"$launch" --np 3 bench all_reduce -b 1M -e 1M -n 4000 -w 5 -J "$work/bench.json" >"$work/bench.log" 2>&1 &
job=$!
for _ in $(seq 1 100); do grep -q "(elements)" "$work/bench.log" && break; sleep 0.1; done
sleep 0.2
victim=$(rank_pid "bench all_reduce -b 1M -e 1M -n 4000" 2)
[ -n "$victim" ] && { echo "bench: stopping rank 2 (pid $victim) for $stop_s s" >&2; stop_rank "$victim"; }
wait $job
python3 - "$work/bench.json" <<'PY'
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]["out_of_place"]
times = ", ".join(f"{t / 1e3:.1f}" for t in row["rank_times_us"])
who = row["straggler"]["rank"] if row["straggler"] else "nobody"
print(f"bench all_reduce 1 MiB x 4000, 3 ranks, rank 2 stopped once: ms per call by rank {times}; named: {who}")
PY
