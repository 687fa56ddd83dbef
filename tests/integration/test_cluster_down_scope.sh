#!/usr/bin/env bash
# `local-cluster.sh down` (and `up`, which starts with it) stops only its own cluster's processes.
# CI runs a second cluster beside this one, in the release matrix's root (a pid and network
# namespace of its own): a `down` that killed every slurmstepd the host can see killed that
# cluster's steps, and their srun waited for ever.
source "$(dirname "$0")/lib.sh"

# Another cluster's step daemon: a process named slurmstepd in a pid namespace of its own.
other=$CLUSTER_DIR/other
mkdir -p "$other"
cp "$(command -v sleep)" "$other/slurmstepd"
unshare --pid --fork "$other/slurmstepd" 600 9>&- &
unshare_pid=$!
trap 'kill -9 "$unshare_pid" 2>/dev/null; pkill -9 -f "^$other/slurmstepd" 2>/dev/null; finish' EXIT
for _ in $(seq 50); do pgrep -f "^$other/slurmstepd" >/dev/null && break; sleep 0.1; done
foreign=$(pgrep -f "^$other/slurmstepd") || { fail "the other cluster's slurmstepd started"; summary; exit 1; }

cluster up --nodes 1 --plugin "$PLUGIN" --plugin-args "$(base_args)" >/dev/null || { fail "the cluster starts"; summary; exit 1; }
# A step of this cluster that is still running when the cluster goes down: its slurmstepd must go.
srun -N1 -n1 sleep 600 &
srun_pid=$!
# Up to 60 s: a loaded machine (a 64-node test beside this one: load average 66) took over 10 s.
# This cluster's step daemons: the slurmstepd in its node's network namespace (another cluster's,
# such as README's demo cluster left up beside the tests, run in namespaces of their own).
own_stepds() {
  local pid
  for pid in $(ip netns pids "$(node_netns 1)" 2>/dev/null); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] && echo "$pid"
  done
}
for _ in $(seq 600); do [ "$(squeue -h -t R | wc -l)" -ge 1 ] && [ -n "$(own_stepds)" ] && break; sleep 0.1; done
own=$(own_stepds)
[ -n "$own" ] || fail "this cluster's step has a slurmstepd"
cluster down >/dev/null 2>&1
kill -9 "$srun_pid" 2>/dev/null || true  # srun would wait for its controller for ever
wait "$srun_pid" 2>/dev/null || true

# alive: a process that is not a zombie (a killed slurmstepd whose parent has not reaped it yet)
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
left=""
for p in $own; do alive "$p" && left+=" $p ($(cat "/proc/$p/cmdline" 2>/dev/null | tr '\0' ' '), $(readlink "/proc/$p/ns/net" 2>/dev/null))"; done
expect_eq "down ends this cluster's slurmstepd" "" "$left"
if alive "$foreign"; then pass "down leaves another pid namespace's slurmstepd running"; else fail "down leaves another pid namespace's slurmstepd running" "pid $foreign was killed"; fi
summary
