#!/usr/bin/env bash
# check-node at fleet size: 64 namespace nodes of the real local cluster, three with different
# faults (node7 a data NIC down, node33 a GPU with uncorrected ECC errors through the NVML stand-in,
# node50 a data NIC at the wrong MTU). Measures how long the node check alone takes on all 64 nodes
# at once (one `srun -N64 --ntasks-per-node=1` job, what `health --node-check` runs before any pair)
# and whether it names exactly those three; then `health --node-check` with the pairs, which must
# leave them out of the pairs and drain them with XID or unspecified.
#   sudo perf/node_check_fleet.sh        (after cmake --build; takes the local-cluster lock)
set -uo pipefail
export GPUDIRECT_SOURCE_DIR=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
source "$GPUDIRECT_SOURCE_DIR/tests/integration/lib.sh"
source "$GPUDIRECT_SOURCE_DIR/tests/integration/check_node_env.sh"
NODES=64
seconds_since() { awk -v s="$1" -v e="$(date +%s%N)" 'BEGIN {printf "%.1f", (e - s) / 1e9}'; }

t=$(date +%s%N)
cluster up --nodes $NODES --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster did not start"; exit 1; }
echo "$NODES nodes up in $(seconds_since "$t") s"
check_node_env $NODES
# health runs PROGRAM check-node --machine-type T --json: check-node.sh gives the first three itself.
printf '#!/bin/bash\nshift 3\nexec %s "$@"\n' "$CLUSTER_DIR/check-node.sh" >"$CLUSTER_DIR/health-node-check.sh"
chmod +x "$CLUSTER_DIR/health-node-check.sh"
ip -n "$(node_netns 7)" link set enp134s0 down
echo "gpu 6 ecc_volatile 4" >>"$CLUSTER_DIR/node/node33/nvml.conf"
ip -n "$(node_netns 50)" link set enp13s0 mtu 9000

for round in 1 2 3; do
  t=$(date +%s%N)
  out=$(srun -N$NODES --ntasks-per-node=1 "$CLUSTER_DIR/check-node.sh" 2>&1)
  echo "check-node on $NODES nodes, round $round: $(seconds_since "$t") s; failing: $(grep -o '^gpudirect check-node: node[0-9]*: FAIL' <<<"$out" | awk '{print $3}' | tr -d : | sort -uV | tr '\n' ' ')"
done
grep ': FAIL' <<<"$out"

t=$(date +%s%N)
"$LAUNCH" --timeout 60 health --nodelist "node[1-$NODES]" --node-check local-a3mega --node-check-program "$CLUSTER_DIR/health-node-check.sh" \
  --ntasks-per-node 1 --gpus-per-task 0 -b 512K -e 512K -n 3 -w 1 --median-factor 0.2 --pair-timeout 200 \
  --work-dir "$CLUSTER_DIR/sweep" --drain >"$CLUSTER_DIR/sweep.out" 2>&1
rc=$?
echo "health --node-check on $NODES nodes (pairs included): $(seconds_since "$t") s, exit $rc"
grep -E 'node check:|fleet:|bad node' "$CLUSTER_DIR/sweep.out" | grep -v 'on 64 nodes'
echo "drained: $(sinfo -h -N -o '%N %E' | awk '$2 != "none" {print $1 "=" $2}' | sort -uV | tr '\n' ' ')"
