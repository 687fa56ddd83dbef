#!/usr/bin/env bash
# scripts/rxdm/gpudirect-rxdm as the local cluster's real Prolog and Epilog, with a stand-in
# container command (tests/rxdm/stand-in-container) whose RxDM becomes ready late, never, or dies.
# Each node has its own private directory (like its own /run) for the ready file, whose path the
# script reads from the plugin's plugstack line: the plugin then waits on exactly that file.
source "$(dirname "$0")/lib.sh"

RXDM=$SRC/scripts/rxdm/gpudirect-rxdm
NODERUN=$CLUSTER_DIR/noderun        # each node sees its own empty tmpfs here
STATE=$CLUSTER_DIR/stand-in         # the stand-in's containers, logs and calls, per node
READY=$NODERUN/rxdm.ready
mkdir -p "$NODERUN" "$STATE" "$CLUSTER_DIR/aperture" "$CLUSTER_DIR/no-aperture"
: >"$CLUSTER_DIR/aperture/0000:06:00.0"        # /dev/aperture_devices on a node that has them
: >"$CLUSTER_DIR/gpu_rxq_configuration.textproto"
for context in prolog epilog; do  # slurm.conf runs one program without arguments: a wrapper points it at our settings
  printf '#!/bin/sh\nGPUDIRECT_RXDM_CONFIG=%s exec %s\n' "$CLUSTER_DIR/rxdm.conf" "$RXDM" >"$CLUSTER_DIR/$context"
  chmod +x "$CLUSTER_DIR/$context"
done

# settings MACHINE_TYPE [APERTURE_DIR] [READY_TIMEOUT]: the script's settings for the next jobs
settings() {
  cat >"$CLUSTER_DIR/rxdm.conf" <<EOC
RXDM_CONTAINER_CMD="$SRC/tests/rxdm/stand-in-container $STATE"
RXDM_MACHINE_TYPE=$1
RXDM_READY_TIMEOUT=${3:-4}
RXDM_POLL_INTERVAL=0.2
RXDM_APERTURE_DIR=${2:-$CLUSTER_DIR/aperture}
RXDM_APERTURE_TIMEOUT=1
RXDM_KERNEL_MODULE=
RXDM_TCPX_UDS_PREFIX=$NODERUN/tcpx-
RXDM_TCPX_TOPOLOGY=$CLUSTER_DIR/gpu_rxq_configuration.textproto
EOC
}
behaviour() { echo "$1" >"$STATE/behaviour"; rm -f "$STATE"/behaviour.node*; }
on_node() { nsenter -t "$(cat "$CLUSTER_DIR/run/slurmd-$1.pid")" -m -- "${@:2}"; }  # in that node's mounts
last_job() { squeue -h -t all -o '%i' 2>/dev/null | sort -n | tail -1; }  # job ids restart at 1 with the cluster
reasons() { sinfo -h -N -R -o '%N %E' | sort; }
# wait_reasons N: srun returns at the first node's failure; wait (10 s at most) for N nodes' reasons
wait_reasons() {
  local deadline=$((SECONDS + 10))
  while [ "$(reasons | grep -c 'gpudirect-rxdm')" -lt "$1" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
}
# After a failed prolog slurmd reports the failure again later and the node drains again: a fresh
# cluster (a few seconds) is the only clean state for the next case.
stop_stand_ins() {  # the stand-in "containers" still running, then their state
  local pid
  for pid in "$STATE"/node*/*.pid; do [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null; done
  rm -rf "$STATE"/node*
}
trap 'stop_stand_ins; finish' EXIT
restart() {
  stop_stand_ins
  cluster up --plugin "$PLUGIN" --plugin-args "$(base_args rxdm_ready=$READY rxdm_timeout=3)" \
    --prolog "$CLUSTER_DIR/prolog" --epilog "$CLUSTER_DIR/epilog" --node-private "$NODERUN" >/dev/null ||
    { fail "the local cluster (re)starts"; summary; exit 1; }
}
running_containers() { for n in node1 node2; do "$SRC/tests/rxdm/stand-in-container" "$STATE" ps --filter name=receive-datapath-manager- 2>/dev/null; done; }
# wait_epilog: the epilog runs after srun returns; wait until no stand-in RxDM runs (at most 10 s)
wait_epilog() {
  local deadline=$((SECONDS + 10))
  while [ $SECONDS -lt $deadline ]; do
    [ -z "$(ls "$STATE"/node*/*.pid 2>/dev/null)" ] && [ -z "$(squeue -h)" ] && return 0
    sleep 0.2
  done
  return 1
}

settings a3-megagpu-8g
restart

# 1. A single-node job on A3 Mega: no RxDM; the ready file says none is needed, so the plugin's
#    wait for it lets a --gpu-direct=tcpxo task start at once.
behaviour "ready-after 0"
out=$(timeout 60 srun -Q -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c "echo \$GPUDIRECT_MODE \$(cat $READY)" 2>&1)
job=$(last_job)
expect_eq "single-node job: no container; the ready file says none is needed; the task starts" \
  "tcpxo job=$job container=none mode=tcpxo|" "$out|$(cat "$STATE"/node*/calls 2>/dev/null)"
wait_epilog
expect_eq "... and the epilog removes it" "absent" "$(on_node node1 test -e "$READY" && echo present || echo absent)"

# 2. Another machine type: nothing to do; the plugin, asked for tcpxo, then waits for RxDM in vain.
rm -f "$STATE"/node*/calls
settings n2-standard-8
out=$(timeout 60 srun -Q -N2 --ntasks-per-node=1 bash -c "ls $NODERUN; echo ok" 2>&1)
expect_eq "another machine type: the prolog is a no-op" "ok
ok|" "$out|$(cat "$STATE"/node*/calls 2>/dev/null)"
out=$(timeout 60 srun -Q -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo true 2>&1)
expect_contains "... and the plugin, waiting on the same path, says RxDM is not ready" "RxDM) is not ready: $READY does not exist" "$out"

# 3. A3 Mega, two nodes, RxDM ready after 1 s: the job starts after the ready file exists.
settings a3-megagpu-8g
behaviour "ready-after 1"
started=$SECONDS
out=$(timeout 60 srun -Q -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo "$(hostname) $GPUDIRECT_MODE $(cat '"$READY"')"' 2>&1 | sort)
job=$(last_job)
expect_eq "ready late: the job runs on both nodes, each with its node's ready file" "node1 tcpxo job=$job container=receive-datapath-manager-$job mode=tcpxo
node2 tcpxo job=$job container=receive-datapath-manager-$job mode=tcpxo" "$out"
[ $((SECONDS - started)) -ge 1 ] && pass "... and not before RxDM was ready (>= 1 s)" || fail "... and not before RxDM was ready (>= 1 s)"
calls=$(cat "$STATE/node1/calls")
expect_contains "the NCCL plugin installer ran" "run --rm --name nccl-installer-$job --network=host -v /var/lib:/var/lib us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev" "$calls"
expect_contains "RxDM started detached, named for the job, with 8 NICs" "run --detach --name receive-datapath-manager-$job" "$calls"
expect_contains "... the TCPXO RxDM image and arguments" "tcpgpudmarxd-dev:v1.0.23 --num_hops=2 --num_nics=8" "$calls"
wait_epilog && pass "the epilog stopped both RxDM containers" || fail "the epilog stopped both RxDM containers" "$(ls "$STATE"/node*)"
expect_eq "the epilog removed each node's ready file" "absent absent" \
  "$(for n in node1 node2; do on_node "$n" test -e "$READY" && echo present || echo absent; done | xargs)"
expect_eq "no node drained" "" "$(reasons)"

# 4. A3 High (TCPX): ready when RxDM serves its socket in /run/tcpx-<job>, removed by the epilog.
settings a3-highgpu-8g
behaviour "ready-after 0.5"
out=$(timeout 60 srun -Q -N2 --ntasks-per-node=1 bash -c "echo \$(hostname) \$(ls $NODERUN/tcpx-\$SLURM_JOB_ID) \$(cut -d' ' -f3 $READY)" 2>&1 | sort)
job=$(last_job)
expect_eq "TCPX: the job starts once RxDM's socket is in /run/tcpx-<job> (the tcpx profile's prefix)" "node1 rx_stand_in.sock mode=tcpx
node2 rx_stand_in.sock mode=tcpx" "$out"
expect_contains "... the TCPX RxDM image with its socket dir" "--uds_path $NODERUN/tcpx-$job" "$(cat "$STATE/node1/calls")"
wait_epilog
expect_eq "... the epilog removes the socket dir and the ready file" "absent absent" \
  "$(for n in node1 node2; do on_node "$n" sh -c "test -e $NODERUN/tcpx-$job || test -e $READY" && echo present || echo absent; done | xargs)"

# 5. Failures, in one job: on node1 RxDM never becomes ready, on node2 its container dies. Each
#    node's prolog fails with its own reason (the bounded wait on node1, at once on node2), and the
#    node drains with it.
restart
settings a3-megagpu-8g "" 8
behaviour never
echo "die-after 0.5" >"$STATE/behaviour.node2"
started=$SECONDS
out=$(timeout 60 srun -Q -N2 --ntasks-per-node=1 true 2>&1)
rc=$?
elapsed=$((SECONDS - started))
job=$(last_job)
[ $rc -ne 0 ] && pass "RxDM failures: the job does not run (srun exit $rc)" || fail "RxDM failures: the job does not run" "$out"
[ $elapsed -lt 8 ] && pass "... the dead container is detected before the 8 s timeout (srun returned after $elapsed s)" ||
  fail "... the dead container is detected before the 8 s timeout: srun returned after $elapsed s"
wait_reasons 2
expect_eq "... each node drains with its own reason: the bounded wait, the dead container and its last log" \
  "node1 gpudirect-rxdm: node1 job $job: RxDM (receive-datapath-manager-$job) not ready after 8 s (no 'Buffer manager initialization complete' in its log); check its log, or raise RXDM_READY_TIMEOUT in $CLUSTER_DIR/rxdm.conf
node2 gpudirect-rxdm: node2 job $job: the RxDM container receive-datapath-manager-$job exited before it was ready (last log: stand-in RxDM starting stand-in RxDM: fatal error, exiting ); check the image and 'docker logs' on the node" \
  "$(reasons)"
wait_epilog && pass "... and the epilog stops the containers anyway" || fail "... and the epilog stops the containers anyway"

restart
# 6. No aperture devices: TCPXO cannot work; the prolog says so.
settings a3-megagpu-8g "$CLUSTER_DIR/no-aperture"
behaviour "ready-after 0"
out=$(timeout 60 srun -Q -N2 --ntasks-per-node=1 true 2>&1)
job=$(last_job)
wait_reasons 2
expect_contains "empty /dev/aperture_devices: the prolog fails, naming it" \
  "node1 gpudirect-rxdm: node1 job $job: $CLUSTER_DIR/no-aperture is still empty after 1 s: the TCPXO aperture devices are missing" "$(reasons)"
expect_eq "... before starting any container" "" "$(grep -h 'run --detach' "$STATE"/node*/calls 2>/dev/null | grep -- "-$job ")"

summary
