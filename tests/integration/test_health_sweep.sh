#!/usr/bin/env bash
# gpudirect-launch health under the real local Slurm, 4 namespace nodes: node3's data NICs (the
# ones its ranks' libfabric tcp traffic uses, as the plugin binds them) are rate limited with tc
# inside its namespace; the sweep must name exactly node3, drain it with our reason (--drain),
# undrain it once the limit is gone (--resume), skip a down node without waiting for it, and end
# a pair that outlives --pair-timeout. The table, JSON, SVG and metrics file are checked on the way.
# (tc netem is not in this kernel; tbf is the rate limit that is: the check takes whichever works.)
source "$(dirname "$0")/lib.sh"

cluster up --nodes 4 --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { echo "cluster did not start"; exit 1; }
work=$CLUSTER_DIR/health
mkdir -p "$work"
SLOW=node3
SLOW_NS=$(node_netns 3)

# Tiny sizes and few iterations: the pairs measure in seconds. 2 ranks per node, each on the NIC
# the plugin gives its GPU (--gpu-direct=tcpxo). The threshold is relative to the sweep's median:
# 0.2 x keeps the healthy pairs passing on this shared 2-core machine (their busbw varies 3x with
# the load), while 4 Mbit/s puts the slowed node's pairs 50-200x under them.
sweep() {
  timeout 240 "$LAUNCH" --timeout 20 health --nodelist 'node[1-4]' --ntasks-per-node 2 --gpus-per-task 1 --gpu-direct tcpxo \
    -b 512K -e 512K -n 3 -w 1 --median-factor "${FACTOR:-0.2}" --pair-timeout 60 --work-dir "$work/$1" "${@:2}"
}

# Which NICs node3's ranks send on: the first of GPUDIRECT_NICS, as bench's libfabric transport takes it.
nics=$(timeout 60 srun -N1 -w $SLOW --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo sh -c 'echo ${GPUDIRECT_NICS%%,*}' 2>&1 | sort -u)
if [ -z "$nics" ] || ! grep -qE '^enp[0-9]+s0$' <<<"$nics"; then
  fail "the plugin names node3's data NICs" "$nics"
  summary
  exit 1
fi
echo "     node3's ranks send on: $(echo $nics)"

limit() {
  local nic
  for nic in $nics; do
    ip netns exec $SLOW_NS tc qdisc replace dev "$nic" root netem rate 4mbit 2>/dev/null ||
      ip netns exec $SLOW_NS tc qdisc replace dev "$nic" root tbf rate 4mbit burst 64kb latency 1s || return 1
  done
}
unlimit() {
  local nic
  for nic in $nics; do ip netns exec $SLOW_NS tc qdisc del dev "$nic" root 2>/dev/null; done
  return 0
}
limit || { fail "tc cannot rate limit $SLOW's NICs"; summary; exit 1; }

# 1. The slowed node is named, alone, and drained with our reason.
start=$SECONDS
out=$(sweep slow --drain --json "$work/slow.json" --svg "$work/slow.svg" --metrics-file "$work/health.prom" 2>&1)
rc=$?
echo "     sweep with $SLOW slowed: exit $rc in $((SECONDS - start)) s"
grep -vE '^gpudirect health: .*(started|skipping)' <<<"$out" | sed 's/^/     | /'
expect_eq "the sweep exits 7 (bad nodes found)" 7 "$rc"
bad=$(verdict_nodes "$out" BAD)
expect_eq "the sweep names exactly $SLOW" "$SLOW " "$bad"
good=$(verdict_nodes "$out" good)
expect_eq "the other nodes are good (the second pass cleared $SLOW's first peer)" "node1 node2 node4 " "$good"
expect_contains "the drain line names the measurement and a good peer" \
  "scontrol update nodename=$SLOW state=drain reason='gpudirect health: all_gather " "$out"
drained=$(sinfo -R -h -N -o '%N|%T|%E')
if grep -qE "^$SLOW\|drain(ed|ing)\|gpudirect health: all_gather [0-9.e-]+ GB/s with node[124], threshold " <<<"$drained"; then
  pass "sinfo -R shows $SLOW drained with our reason: $(grep "^$SLOW" <<<"$drained" | cut -d'|' -f3)"
else
  fail "sinfo -R shows $SLOW drained with our reason" "$drained"
fi
in_service=$(in_service_nodes)
expect_eq "the good nodes stay in service" "node1 node2 node4 " "$in_service"
log=$(grep -l "on *$SLOW device" "$work"/slow/*.log | head -1)
used=$(grep -ohE "on +$SLOW device +[0-9]+ \[host\] libfabric:$ACROSS_PROVIDER(\+shm)? on [a-z0-9]+" "$log" | awk '{print $NF}' | sort -u | tr '\n' ' ')
expect_eq "$SLOW's ranks used the rate-limited NICs" "$(echo $nics) " "$used"
if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v={n['node']: n['verdict'] for n in d['nodes']}; sys.exit(0 if v=={'node1':'good','node2':'good','node3':'bad','node4':'good'} and d['threshold_gbps']>0 else 1)" "$work/slow.json"; then
  pass "--json parses and holds the verdicts"
else
  fail "--json parses and holds the verdicts" "$(head -c 600 "$work/slow.json" 2>&1)"
fi
if xmllint --noout "$work/slow.svg" 2>&1 && [ "$(grep -c '<g><title>' "$work/slow.svg")" -ge 8 ]; then
  pass "--svg is well-formed XML with a cell per measured pair"
else
  fail "--svg is well-formed XML with a cell per measured pair" "$(head -c 400 "$work/slow.svg" 2>&1)"
fi

metrics=$(cat "$work/health.prom" 2>&1)
if command -v promtool >/dev/null; then
  if check=$(promtool check metrics <"$work/health.prom" 2>&1); then pass "--metrics-file passes promtool check metrics"; else fail "promtool check metrics" "$check"; fi
fi
expect_contains "the metrics name $SLOW bad" "gpudirect_health_node_passed{node=\"$SLOW\",verdict=\"bad\"} 0" "$metrics"
expect_contains "the metrics have node1's busbw" 'gpudirect_health_node_busbw_gbps{node="node1"} ' "$metrics"

# 2. Limit gone: --resume measures the node we drained and puts it back; --groups adds a 4-node run.
unlimit
out=$(sweep resumed --resume --groups 2>&1)
rc=$?
expect_eq "after the limit is removed the sweep with --resume passes" 0 "$rc"
expect_contains "--resume names the node it took back" "resumed $SLOW: it passes now" "$out"
expect_contains "--groups runs the 4 good nodes together" "group 4 nodes node1,node2,node3,node4:" "$out"
# In service: not drained. Right after the sweep its last step may still be completing (seen on a
# loaded machine), which is in service too.
expect_eq "$SLOW is back in service" "$SLOW " "$(in_service_nodes | tr ' ' '\n' | grep -x "$SLOW" | tr '\n' ' ')"

# Inside an allocation the pairs are job steps: salloc's 4 nodes, swept from its shell.
out=$(timeout 240 salloc -N4 --ntasks-per-node=2 --gpus-per-task=1 "$LAUNCH" --timeout 20 health --nodelist 'node[1-4]' \
  --ntasks-per-node 2 --gpus-per-task 1 --gpu-direct tcpxo -b 512K -e 512K -n 3 -w 1 --median-factor 0.2 --pair-timeout 60 \
  --work-dir "$work/in-allocation" 2>&1)
rc=$?
expect_eq "inside salloc the sweep runs its pairs as steps and passes" 0 "$rc"
expect_contains "inside salloc every node is swept" "all 4 swept nodes passed" "$out"

# 3. A down node is reported and not waited for: node4's slurmd stopped and the node set down
# (stopped, so ReturnToService cannot bring it back mid-sweep); 3 nodes swept, node3 as the odd
# one out runs with a node that passed.
kill "$(cat "$CLUSTER_DIR/run/slurmd-node4.pid")"
# Until sinfo says so: right after the salloc above, node4 may still be completing its job, and
# slurmctld can leave the update for later.
for _ in $(seq 1 30); do
  scontrol update nodename=node4 state=down reason="health test: down on purpose" 2>/dev/null
  grep -q '^down' < <(sinfo -h -n node4 -o %T) && break
  sleep 0.5
done
start=$SECONDS
# The bandwidth rule is not what this part tests: with node4 down its median is one pair's, and on a
# loaded machine one unlimited pair measured 7 times another (0.588 and 0.0851 GB/s, a CI run with the
# sanitizer tests beside it), which the 0.2 factor judged slow. A factor of 0.01 still fails a dead link.
out=$(FACTOR=0.01 sweep down 2>&1)
rc=$?
took=$((SECONDS - start))
expect_eq "with node4 down the other nodes pass" 0 "$rc"
line=$(grep '^node4 ' <<<"$out")
if grep -qE '^node4 +0 +skipped +down\*?: health test: down on purpose$' <<<"$line"; then pass "the down node is reported: $line"; else fail "the down node is reported" "$out"; fi
expect_contains "the odd node out is measured with a good node" "node3      1  good" "$out"
if [ $took -lt 60 ]; then pass "the sweep did not wait for the down node (${took} s)"; else fail "the sweep took ${took} s with a down node"; fi

# 4. A pair that outlives --pair-timeout is ended and counted failed: the sweep stays bounded.
start=$SECONDS
out=$(timeout 120 "$LAUNCH" --timeout 20 health --nodelist 'node[1-2]' --ntasks-per-node 1 --gpus-per-task 0 -b 1M -e 1M -n 100000000 \
  --pair-timeout 4 --threshold 0.001 --work-dir "$work/hung" 2>&1)
rc=$?
took=$((SECONDS - start))
expect_eq "a pair over --pair-timeout fails the sweep (suspects, exit 7)" 7 "$rc"
expect_contains "the pair is reported timed out" "node1      1  suspect   node2 timed out" "$out"
# srun ends its step on SIGTERM and exits (Slurm 24.11's srun at times ~10 s after its tasks);
# SIGKILL only after 20 s.
if [ $took -lt 40 ]; then pass "the hung pair ended the sweep in ${took} s (timeout 4 s + srun's exit)"; else fail "the sweep with a hung pair took ${took} s"; fi
# srun cancelled its job on SIGTERM: nothing of it still runs or waits (COMPLETING is the cleanup).
# slurmctld may take a moment to see the cancel through on a loaded machine (seen: RUNNING right
# after the sweep returned): up to 30 s.
for _ in $(seq 150); do
  left=$(squeue -h -t pending,running -o '%i %j %T' | grep gpudirect-health || true)
  [ -z "$left" ] && break
  sleep 0.2
done
expect_eq "no sweep job is left running or pending" "" "$left"

out=$("$LAUNCH" health --nodelist 'node[1-' 2>&1)
rc=$?
expect_eq "a malformed --nodelist is a usage error (6)" 6 "$rc"

summary
