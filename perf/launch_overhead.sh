#!/usr/bin/env bash
# What the plugin costs a job launch: `srun -N2 -n16 true` (8 tasks per node, a fake GPU each) on
# the real local cluster without the plugin, with it but no --gpu-direct, and with
# --gpu-direct=tcpxo (with and without CPU binding). Rounds alternate the four so drift hits all
# alike; prints medians and the median of per-round ratios (goal for no-flag: at most 1.05).
#   sudo perf/launch_overhead.sh [ROUNDS]      (after cmake --build --preset release)
set -uo pipefail
export GPUDIRECT_SOURCE_DIR=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
source "$GPUDIRECT_SOURCE_DIR/tests/integration/lib.sh"
rounds=${1:-21}
cluster_up
one() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000)); }
job=(srun -N2 -n16 --ntasks-per-node=8 --gpus-per-task=1)
results=$CLUSTER_DIR/overhead.txt
for i in $(seq 1 "$rounds"); do
  empty_plugstack; a=$(one "${job[@]}" true)
  set_plugin_args "$(base_args)"; b=$(one "${job[@]}" true)
  c=$(one "${job[@]}" --gpu-direct=tcpxo true)
  set_plugin_args "$(base_args cpu_bind=off)"; d=$(one "${job[@]}" --gpu-direct=tcpxo true)
  echo "$a $b $c $d" >>"$results"
  printf 'round %d/%d\r' "$i" "$rounds" >&2
done
python3 - "$results" <<'P'
import statistics as s, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
cols = list(zip(*rows))
names = ["no plugin", "plugin, no --gpu-direct", "--gpu-direct=tcpxo", "--gpu-direct=tcpxo, cpu_bind=off"]
for n, c in zip(names, cols):
    print("%-34s median %6.1f ms   ratio %.3f" % (n, s.median(c) / 1000, s.median([y / x for x, y in zip(cols[0], c)])))
P
