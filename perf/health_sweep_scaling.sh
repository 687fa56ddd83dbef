#!/usr/bin/env bash
# The health sweep's wall time as the fleet grows: 8, 16, 32 and 64 nodes of the real local cluster
# (network namespaces, 8 data NICs each), node3 degraded (its ranks' NICs rate limited) so the second
# pass runs too; 2 ranks per node, 512 KiB all_gather. Per size: passes, pairs per pass, the sweep's
# wall time, the median pair job, one idle `srun -N2 true` (what a job start costs), slurmctld's CPU
# seconds and RPCs during the sweep, and how busy the machine's cores were. Then --groups at 64 nodes
# (1 rank per node: 2 per node put 64-128 busy ranks per batch on 2 cores) with its heat map.
#   sudo perf/health_sweep_scaling.sh [SIZES...]   (default 8 16 32 64; after cmake --build)
# Writes its sweeps' JSON and SVG to ${OUT:-/tmp/gpudirect-health-scaling}.
set -uo pipefail
export GPUDIRECT_SOURCE_DIR=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
source "$GPUDIRECT_SOURCE_DIR/tests/integration/lib.sh"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8 16 32 64)
OUT=${OUT:-/tmp/gpudirect-health-scaling}
mkdir -p "$OUT"

ctld_cpu() { awk '{print $14 + $15}' "/proc/$(cat "$CLUSTER_DIR/run/slurmctld.pid")/stat"; }
busy_jiffies() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8}' /proc/stat; }
rpcs() { sdiag | awk '/^Remote Procedure Call statistics by message type/ {on = 1} /^Remote Procedure Call statistics by user/ {on = 0}
  on && /count:/ {for (i = 1; i <= NF; i++) {if ($i ~ /^count:/) {split($i, a, ":"); c += a[2]} if ($i ~ /^total_time:/) {split($i, b, ":"); t += b[2]}}}
  END {printf "%d %.1f", c, t / 1000}'; }
seconds_since() { awk -v s="$1" -v e="$(date +%s%N)" 'BEGIN {printf "%.1f", (e - s) / 1e9}'; }
hz=$(getconf CLK_TCK)

sweep() {  # NODES NAME [health options]
  local n=$1 name=$2
  shift 2
  "$LAUNCH" --timeout 120 health --nodelist "node[1-$n]" --gpus-per-task 1 --gpu-direct tcpxo -b 512K -e 512K -n 3 -w 1 \
    --median-factor 0.2 --pair-timeout 400 --work-dir "$CLUSTER_DIR/work-$name" --json "$OUT/$name.json" --svg "$OUT/$name.svg" "$@"
}

printf '%-6s %-7s %-22s %-8s %-11s %-11s %-13s %-16s %s\n' nodes passes "pairs per pass" "sweep s" "median pair" "srun -N2 s" "ctld CPU s" "RPCs (ctld ms)" "cores busy"
for n in "${sizes[@]}"; do
  cluster up --nodes "$n" --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster of $n did not start"; exit 1; }
  for nic in enp6s0 enp7s0; do ip netns exec "$(node_netns 3)" tc qdisc replace dev "$nic" root tbf rate 2mbit burst 64kb latency 1s; done
  t=$(date +%s%N); srun -N2 true; srun_s=$(seconds_since "$t")
  sdiag -r >/dev/null
  read -r busy0 total0 < <(busy_jiffies)
  cpu0=$(ctld_cpu)
  t=$(date +%s%N)
  sweep "$n" "sweep-$n" --ntasks-per-node 2 >"$OUT/sweep-$n.txt" 2>&1
  rc=$?
  wall=$(seconds_since "$t")
  cpu=$(awk -v a="$cpu0" -v b="$(ctld_cpu)" -v hz="$hz" 'BEGIN {printf "%.2f", (b - a) / hz}')
  read -r busy1 total1 < <(busy_jiffies)
  read -r rpc_count rpc_ms < <(rpcs)
  summary_line=$(python3 - "$OUT/sweep-$n.json" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
phases = {}
for r in d["runs"]: phases.setdefault(r["phase"], []).append(r)
order = [p for p in ("pairs", "second pass") if p in phases]
secs = [r["seconds"] for r in d["runs"]]
print(len(order), "+".join(str(len(phases[p])) for p in order), "%.1f" % statistics.median(secs))
PY
)
  read -r passes pairs median_pair <<<"$summary_line"
  bad=$(awk '$3 == "BAD" {print $1}' "$OUT/sweep-$n.txt" | tr '\n' ' ')
  printf '%-6s %-7s %-22s %-8s %-11s %-11s %-13s %-16s %s%%   (exit %s, bad: %s)\n' "$n" "$passes" "$pairs" "$wall" "${median_pair} s" "$srun_s" "$cpu" \
    "$rpc_count ($rpc_ms)" "$(( 100 * (busy1 - busy0) / (total1 - total0) ))" "$rc" "${bad:-none}"
done

# --groups at the largest size: node3's limit removed, 1 rank per node.
n=${sizes[-1]}
for nic in enp6s0 enp7s0; do ip netns exec "$(node_netns 3)" tc qdisc del dev "$nic" root 2>/dev/null; done
t=$(date +%s%N)
sweep "$n" "groups-$n" --ntasks-per-node 1 --groups >"$OUT/groups-$n.txt" 2>&1
rc=$?
echo
echo "--groups at $n nodes, 1 rank per node: exit $rc in $(seconds_since "$t") s"
python3 - "$OUT/groups-$n.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sizes = {}
for r in d["runs"]:
    if r["phase"] == "group": sizes.setdefault(len(r["nodes"]), []).append(r)
for size, runs in sorted(sizes.items()):
    ok = [r["busbw"] for r in runs if r["outcome"] == "measured"]
    print(f"  groups of {size:3d}: {len(runs):2d} at once, slowest job {max(r['seconds'] for r in runs):6.1f} s, "
          f"busbw {min(ok) if ok else 0:.4g}-{max(ok) if ok else 0:.4g} GB/s, {len(runs) - len(ok)} not measured")
PY
echo "JSON, SVG and the sweeps' output in $OUT"
