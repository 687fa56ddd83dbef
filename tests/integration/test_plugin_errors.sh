#!/usr/bin/env bash
# The plugin's failures on a real Slurm: each is one clear message and a non-zero exit, fast.
source "$(dirname "$0")/lib.sh"
cluster_up

run() { out=$("$@" 2>&1); rc=$?; }

run srun -N1 -n1 --gpu-direct=tcpxx true
[ $rc -ne 0 ] && pass "invalid --gpu-direct value: srun exits non-zero ($rc)" || fail "invalid value accepted" "$out"
expect_contains "invalid value: message lists the valid values" "invalid --gpu-direct value 'tcpxx': expected auto, tcpxo, tcpx, gib, rdma or off" "$out"
[ -z "$(squeue -h)" ] && pass "invalid value: no job was created" || fail "a job exists after an invalid value" "$(squeue)"

run sbatch --gpu-direct=bogus --wrap true
[ $rc -ne 0 ] && pass "sbatch rejects an invalid value ($rc)" || fail "sbatch accepted an invalid value" "$out"

set_plugin_args "$(base_args)" | true
set_plugin_args default=off topology=$TOPOLOGY lib_dir=/nonexistent/tcpxo profile_dir=$SRC/profiles
run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
[ $rc -ne 0 ] && pass "missing lib dir: the task fails and srun exits non-zero" || fail "missing lib dir accepted" "$out"
expect_contains "missing lib dir: message names node, cause and fix" "on node1: the TCPXO NCCL plugin is missing: no libnccl-net.so in /nonexistent/tcpxo" "$out"

# A plugin file that is there but would not load in NCCL (built for another NCCL or libc, or not a
# plugin at all): the plugin sees only the file; the doctor in the task loads it as NCCL would.
for kind in broken not_a_plugin; do
  with_launcher || { skip "net plugin $kind: doctor in the task names the file and why"; continue; }
  bad=$CLUSTER_DIR/tcpxo-$kind
  mkdir -p "$bad" && cp "$BUILD/tests/net_plugin/$kind/libnccl-net.so" "$bad/"
  set_plugin_args default=off topology=$TOPOLOGY lib_dir=$bad profile_dir=$SRC/profiles
  run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" doctor
  [ $rc -ne 0 ] && pass "net plugin $kind: doctor in the task exits non-zero" || fail "net plugin $kind: doctor said OK" "$out"
  why="does not load: $bad/libnccl-net.so: undefined symbol: gpudirect_standin_missing_symbol"
  [ "$kind" = not_a_plugin ] && why="does not load: it exports no ncclNetPlugin_vN symbol"
  expect_contains "net plugin $kind: doctor names the file and why" \
    "MISMATCH: NCCL_NET=FasTrak needs NCCL's network plugin, and $bad/libnccl-net.so $why" "$out"
done

set_plugin_args "$(base_args rxdm_ready=$CLUSTER_DIR/rxdm.ready rxdm_timeout=2)"
start=$SECONDS
run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
elapsed=$((SECONDS - start))
[ $rc -ne 0 ] && pass "RxDM not ready: srun exits non-zero" || fail "RxDM not ready but the step ran" "$out"
expect_contains "RxDM not ready: clear message" "the TCPXO receive-datapath manager (RxDM) is not ready: $CLUSTER_DIR/rxdm.ready does not exist after waiting 2 s" "$out"
[ $elapsed -lt 15 ] && pass "RxDM not ready: fails fast (${elapsed} s with rxdm_timeout=2)" || fail "RxDM wait took ${elapsed} s"
touch "$CLUSTER_DIR/rxdm.ready"
run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo $GPUDIRECT_MODE'
expect_eq "RxDM ready file present: the step runs" "tcpxo" "$out"

# auto resolves to off on a node without GPUs even though the TCPXO plugin is installed and RxDM is
# configured: nothing may wait for an RxDM that is never started there.
set_plugin_args default=off topology=$SRC/tests/fixtures/gpu-less.xml lib_dir=$LIB_DIR profile_dir=$SRC/profiles \
  rxdm_ready=$CLUSTER_DIR/rxdm-never.ready rxdm_timeout=20
start=$SECONDS
run srun -N1 -n1 --gpu-direct=auto bash -c 'echo ${GPUDIRECT_MODE-unset}'
elapsed=$((SECONDS - start))
expect_eq "auto resolving to off (no GPUs): the step runs untouched" "unset" "$out"
[ $elapsed -lt 15 ] && pass "auto resolving to off: no RxDM wait (${elapsed} s, rxdm_timeout=20)" || fail "auto off waited for RxDM (${elapsed} s)"

set_plugin_args "$(base_args colour=blue)"
run srun -N1 -n1 true
[ $rc -ne 0 ] && pass "unknown plugstack argument fails srun" || fail "unknown plugstack argument accepted" "$out"
expect_contains "unknown plugstack argument: message names it" "plugstack argument 'colour=blue': unknown key" "$out"

set_plugin_args "$(base_args)"
run srun -N1 -n1 --gpu-direct=rdma --gpus-per-task=1 true
[ $rc -ne 0 ] && pass "rdma on a node without RDMA NICs fails" || fail "rdma accepted without RDMA NICs" "$out"
expect_contains "rdma without RDMA NICs: message" "needs RDMA NICs" "$out"

run srun -N1 -n1 --gpu-direct=auto,verbose --gpus-per-task=1 bash -c 'echo ${GPUDIRECT_MODE-unset}'
expect_contains "auto picks tcpxo where the TCPXO plugin is installed" "tcpxo" "$out"

# Hostile --gpu-direct values: refused before a job exists, quoted escaped and cut short.
run srun -N1 -n1 --gpu-direct="$(printf 'tcpxo\nNCCL_NET=evil')" true
[ $rc -ne 0 ] && pass "a value with a newline is refused ($rc)" || fail "a value with a newline was accepted" "$out"
expect_contains "newline value: quoted on one line" "'tcpxo\x0aNCCL_NET=evil'" "$out"
run srun -N1 -n1 --gpu-direct="tcpxo;$(head -c 20000 /dev/zero | tr '\0' x)" true
# (srun's own "Invalid --gpu-direct argument" line repeats the whole value: Slurm's, not ours.)
ours=$(grep 'gpudirect:' <<<"$out" || true)
[ $rc -ne 0 ] && [ -n "$ours" ] && [ ${#ours} -lt 400 ] && pass "a 20 kB value is refused with a short message (${#ours} bytes)" ||
  fail "a 20 kB value: rc $rc, the plugin's message is ${#ours} bytes" "${out:0:500}"

# Node faults: the topology file missing or corrupt fails the task, naming the file.
set_plugin_args "$(base_args | sed "s|topology=[^ ]*|topology=/nonexistent/topology.xml|")"
run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
[ $rc -ne 0 ] && pass "topology file missing: srun exits non-zero" || fail "missing topology file accepted" "$out"
expect_contains "topology file missing: names the file" "/nonexistent/topology.xml" "$out"
set_plugin_args "$(base_args | sed "s|topology=[^ ]*|topology=$SRC/tests/fixtures/malformed-truncated.xml|")"
run srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo true
[ $rc -ne 0 ] && pass "topology file corrupt: srun exits non-zero" || fail "corrupt topology file accepted" "$out"
expect_contains "topology file corrupt: says why" "not well-formed XML" "$out"
# The same faults with the mode off: nothing is read, the step runs.
run srun -N1 -n1 --gpu-direct=off true
[ $rc -eq 0 ] && pass "corrupt topology file, --gpu-direct=off: the step runs" || fail "mode off failed on a corrupt topology" "$out"

summary
