#!/usr/bin/env bash
# gpudirect-launch bench under the real local Slurm: ranks on 2 nodes (network namespaces) talk
# libfabric over TCP (net, or tcp;ofi_rxm where libfabric has no net), each on the NIC the plugin
# gave it, and shm between the ranks of one node; ranks whose libfabric speak different providers
# fail at once; the local sbatch check script.
source "$(dirname "$0")/lib.sh"
cluster_up

# collective label expected-line srun-options...: bench every type of `collective` on 2 nodes x 2
# ranks; passes where every value is right and the output shows `expected-line`.
check_across() {
  local collective=$1 label=$2 expected=$3 out rc
  shift 3
  out=$(timeout 180 srun -N2 --ntasks-per-node=2 "$@" "$LAUNCH" --timeout 60 bench "$collective" -b 8 -e 1M -f 40 -d all -n 2 -w 1 -r 3 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && grep -q "Out of bounds values : 0 OK" <<<"$out" && grep -q -- "$expected" <<<"$out"; then
    pass "$collective $label: every type correct"
  else
    fail "$collective $label (rc $rc)" "$(printf '%s\n' "$out" | tail -15)"
  fi
}
for collective in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  check_across "$collective" "across 2 nodes x 2 ranks (tcp between, shm within)" "libfabric:$ACROSS_PROVIDER+shm"
done
# Ranks dealt to the nodes in turn (0 and 2 on node1): the host groups' ranks are not consecutive,
# so the collectives by host go through scratch; still every value right.
for collective in all_reduce all_gather reduce_scatter; do
  check_across "$collective" "with --distribution=cyclic (by host, ranks of a node not consecutive)" "Rank  1 .* on  *node2 " --distribution=cyclic
done

out=$(timeout 180 srun -N2 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" --timeout 60 bench all_reduce -b 1M -e 1M -o all 2>&1)
expect_contains "with --gpu-direct each rank uses the plugin's NIC" "node2 device  1 [host] libfabric:$ACROSS_PROVIDER+shm on enp7s0" "$out"
expect_contains "with --gpu-direct: all ops correct" "Out of bounds values : 0 OK" "$out"

# The ranks of one node over the network provider too, on request: still correct.
out=$(GPUDIRECT_FABRIC_LOCAL_SHM=0 timeout 180 srun -N2 --ntasks-per-node=2 "$LAUNCH" --timeout 60 bench all_reduce -b 8 -e 1M -f 64 -o all -n 2 -w 1 2>&1)
if grep -qE "\[host\] libfabric:$ACROSS_PROVIDER\$" <<<"$out"; then pass "GPUDIRECT_FABRIC_LOCAL_SHM=0: one provider for every pair"
else fail "GPUDIRECT_FABRIC_LOCAL_SHM=0: one provider for every pair" "$(printf '%s\n' "$out" | grep -m4 'Rank')"; fi
expect_contains "GPUDIRECT_FABRIC_LOCAL_SHM=0: all ops correct" "Out of bounds values : 0 OK" "$out"

# One node's ranks on another provider (as with a different libfabric install): every rank stops
# within seconds naming both providers, instead of waiting for connections that cannot be made; the
# message names the lower rank first, whichever rank reports it.
start=$SECONDS
out=$(timeout 120 srun -N2 --ntasks-per-node=1 sh -c '[ "$SLURM_NODEID" = 1 ] && export FI_PROVIDER="udp;ofi_rxd"; exec "$0" "$@"' \
  "$LAUNCH" --timeout 60 bench all_reduce -b 8 -e 8 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ $((SECONDS - start)) -lt 30 ] && grep -q "rank 0 on node1 uses provider $ACROSS_PROVIDER, rank 1 on node2 uses udp;ofi_rxd" <<<"$out"; then
  pass "mixed providers: rc $rc in $((SECONDS - start)) s, both named"
else
  fail "mixed providers (rc $rc after $((SECONDS - start)) s)" "$(printf '%s\n' "$out" | tail -8)"
fi

out=$(timeout 120 srun -N2 --ntasks-per-node=2 "$LAUNCH" rendezvous-check 2>&1)
expect_contains "rendezvous-check lists every rank" "3 node2 1/2" "$out"
expect_contains "the ranks on two nodes proved the secret the plugin gave the step" "every rank proved the step's secret" "$out"

job_out=$CLUSTER_DIR/allgather.out
if GPUDIRECT_LAUNCH=$LAUNCH timeout 300 sbatch --wait -o "$job_out" "$SRC/scripts/sbatch/allgather-local.sbatch" >/dev/null; then
  expect_contains "allgather-local.sbatch passes" "Out of bounds values : 0 OK" "$(cat "$job_out")"
else
  fail "allgather-local.sbatch failed" "$(tail -20 "$job_out")"
fi

summary
