#!/usr/bin/env bash
# gpudirect-launch health at fleet size: 64 namespace nodes of the real local Slurm (8 data NICs
# each), three of them degraded (their ranks' data NICs rate limited with tc inside their
# namespaces), two of those paired with each other in the first pass. The sweep must name exactly
# those three, drain them and leave the 61 others in service; its second pass must run the suspects'
# pairs with good nodes all at once, not one by one. Then, the limits gone, --resume must put the
# three back. (perf/health_sweep_scaling.sh measures the sweep at 8-64 nodes and --groups.)
source "$(dirname "$0")/lib.sh"

NODES=64
BAD=(node7 node33 node34)  # node7's first-pass peer is healthy; node33 and node34 are each other's
start=$SECONDS
cluster up --nodes $NODES --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster did not start"; exit 1; }
echo "     $NODES nodes up in $((SECONDS - start)) s"
work=$CLUSTER_DIR/health
mkdir -p "$work"

# Small messages and 2 ranks per node, each on the NIC the plugin gives its GPU; the threshold is
# relative to the median (0.2 x) because 32 pairs at once on 2 cores spread healthy busbw over 20x.
sweep() {
  timeout 400 "$LAUNCH" --timeout 60 health --nodelist "node[1-$NODES]" --ntasks-per-node 2 --gpus-per-task 1 --gpu-direct tcpxo \
    -b 512K -e 512K -n 3 -w 1 --median-factor 0.2 --pair-timeout 200 --work-dir "$work/$1" "${@:2}"
}

nics=$(timeout 60 srun -N1 -w node7 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo sh -c 'echo ${GPUDIRECT_NICS%%,*}' 2>&1 | sort -u)
grep -qE '^enp[0-9]+s0$' <<<"$nics" || { fail "the plugin names the ranks' data NICs" "$nics"; summary; exit 1; }
tc_on_bad() {
  local node nic
  for node in "${BAD[@]}"; do
    for nic in $nics; do ip netns exec "$(node_netns "${node#node}")" tc "$@" dev "$nic" root ${TBF:+tbf rate 256kbit burst 16kb latency 1s} || return 1; done
  done
}
# 256 kbit/s: 32 pairs at once on 2 cores put healthy pairs as low as 2 Mbit/s (the first pass's
# median with Debian 13's libfabric 2.1: 0.0017 GB/s), so a 2 Mbit/s limit no longer stood out.
TBF=1 tc_on_bad qdisc replace || { fail "tc cannot rate limit the degraded nodes' NICs"; summary; exit 1; }

start=$SECONDS
out=$(sweep slow --drain --json "$work/slow.json" --svg "$work/slow.svg" 2>&1)
rc=$?
echo "     sweep of $NODES nodes with ${BAD[*]} degraded: exit $rc in $((SECONDS - start)) s"
grep -E '^gpudirect health: (threshold|second pass: .*busbw|second pass: .*failed|.*bad node)' <<<"$out" | sed 's/^/     | /'
expect_eq "the sweep exits 7 (bad nodes found)" 7 "$rc"
bad=$(verdict_nodes "$out" BAD)
expect_eq "the sweep names exactly the degraded nodes" "${BAD[*]} " "$bad"
good=$(verdict_nodes "$out" good | wc -w)
expect_eq "the 61 other nodes are good" 61 "$good"
drained=$(sinfo -h -N -t drain,draining,drained -o '%N' | sort -V | tr '\n' ' ')
expect_eq "exactly the degraded nodes are drained" "${BAD[*]} " "$drained"
in_service=$(in_service_nodes | wc -w)
expect_eq "the good nodes stay in service" 61 "$in_service"
# The second pass: every suspect's pair with a good node started before the first one ended.
second=$(grep '^gpudirect health: second pass: ' <<<"$out")
started=$(grep -c ' started ' <<<"$second")
first_end=$(printf '%s\n' "$second" | grep -nvm1 ' started ' | cut -d: -f1)
if [ "$started" -ge 3 ] && [ "$first_end" -gt "$started" ]; then
  pass "the second pass ran its $started pairs at once"
else
  fail "the second pass ran its pairs at once ($started started, the first ended at line $first_end)" "$second"
fi
if python3 - "$work/slow.json" "${BAD[@]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = sorted(n["node"] for n in d["nodes"] if n["verdict"] == "bad")
sys.exit(0 if bad == sorted(sys.argv[2:]) and len(d["nodes"]) == 64 else 1)
PY
then pass "--json holds the 64 verdicts"; else fail "--json holds the 64 verdicts" "$(head -c 400 "$work/slow.json")"; fi
width=$(grep -oE '<svg[^>]* width="[0-9]+"' "$work/slow.svg" | grep -oE '[0-9]+"$' | tr -d '"')
if xmllint --noout "$work/slow.svg" 2>&1 && [ "${width:-99999}" -le 1600 ]; then
  pass "--svg is well-formed and $width px wide at $NODES nodes"
else
  fail "--svg is well-formed and at most 1600 px wide" "width ${width:-none}"
fi

# The limits gone: --resume measures the three with the rest and puts them back.
tc_on_bad qdisc del
out=$(sweep resumed --resume 2>&1)
rc=$?
expect_eq "after the limits are removed the sweep with --resume passes" 0 "$rc"
expect_contains "--resume names the nodes it took back" "resumed node34: it passes now" "$out"
drained=$(sinfo -h -N -t drain,draining,drained -o '%N' | tr '\n' ' ')
expect_eq "no node is left drained" "" "$drained"

summary
