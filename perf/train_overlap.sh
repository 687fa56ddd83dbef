#!/usr/bin/env bash
# How much of the data-parallel gradient communication backward hides: `gpudirect-launch train`
# at 2 and 4 local ranks (libfabric shm), a small GPT (default 4 layers, width 256, 128 tokens,
# 3.3M parameters = 13 MiB of gradients in 1 MiB buckets), REPEATS runs each; prints the median step
# time and the median exposed (non-overlapped) communication per run and their median ratio
# (goal: under 10% of the step). Numbers only, never asserted.
#   perf/train_overlap.sh [REPEATS]          (after cmake --build --preset release)
# Take it under `flock /tmp/gpudirect-bench.lock` on a shared machine.
set -uo pipefail
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${GPUDIRECT_BUILD_DIR:-$SRC/build/release}
LAUNCH=$BUILD/launcher/gpudirect-launch
repeats=${1:-3}
shape=(${TRAIN_SHAPE:---preset tiny --layers 4 --width 256 --seq-len 128 --micro-batch 4})
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "train_overlap: ${shape[*]}, ${STEPS:-8} steps, --threads ${THREADS:-1}, --bucket-mib ${BUCKET_MIB:-1}, $repeats run(s) per rank count"
for np in 2 4; do
  for zero in "" --zero1; do
    for r in $(seq "$repeats"); do
      "$LAUNCH" --np "$np" train --backend libfabric "${shape[@]}" --steps "${STEPS:-8}" --threads "${THREADS:-1}" --bucket-mib "${BUCKET_MIB:-1}" \
        --peak-tflops 1 $zero -J "$work/np$np$zero-$r.json" >"$work/np$np$zero-$r.log" 2>&1 \
        || { echo "train_overlap: --np $np $zero run $r failed:"; tail -5 "$work/np$np$zero-$r.log"; }
    done
    python3 - "$np" "${zero:-all-reduce}" "$work"/np$np$zero-*.json <<'P'
import json, statistics, sys
np_, mode, files = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = []
for name in files:
    for line in open(name):
        d = json.loads(line)
        if d.get("type") == "summary":
            runs.append((d["median_step_ms"], d["median_exposed_comm_ms"]))
if not runs:
    sys.exit(f"train_overlap: no summaries for {np_} ranks")
ratios = [e / s for s, e in runs]
print(f"{np_} ranks, {mode:>10}: step " + " ".join(f"{s:7.1f}" for s, _ in runs) + " ms | exposed comm "
      + " ".join(f"{e:6.1f}" for _, e in runs) + f" ms | median exposed share {100 * statistics.median(ratios):5.1f}% "
      f"(min {100 * min(ratios):.1f}%, max {100 * max(ratios):.1f}%)")
P
  done
done
