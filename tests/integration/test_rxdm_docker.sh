#!/usr/bin/env bash
# scripts/rxdm/gpudirect-rxdm against a REAL Docker engine (Debian's docker.io): each node of the
# local cluster gets its own private dockerd (no iptables, no bridge, its own data and exec roots
# and socket under the test's directory), with RxDM's image name given to a local image made by
# `docker import` from a busybox root, whose entrypoint becomes ready late, never, or dies.
# The prolog runs as the cluster's real Prolog/Epilog for the cases where the job should run (ready;
# a container left over from a crashed job); the failure cases run it directly on node1, as slurmd
# would (root, slurmd's variables, the cluster's SLURM_CONF, so the drain is real), so that what the
# prolog itself leaves behind is seen before any epilog could clean up.
# Exits 77 (skipped) where no dockerd can start here, saying why.
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
skip_because() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip_because "needs root (it starts dockerd)"
for tool in dockerd docker containerd runc busybox iptables; do
  command -v "$tool" >/dev/null || skip_because "no $tool (Debian: apt-get install docker.io busybox-static iptables)"
done
[ -d /sys/fs/cgroup ] && [ -n "$(ls -A /sys/fs/cgroup)" ] || skip_because "no cgroup file system at /sys/fs/cgroup"
source "$(dirname "$0")/lib.sh"
started_at=$SECONDS

RXDM=$SRC/scripts/rxdm/gpudirect-rxdm
DOCKER=$(command -v docker)
[ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker  # docker.io's own client, as on a Debian node
TCPXO_IMAGE=$(sed -n 's/^RXDM_TCPXO_IMAGE=\([^ ]*\).*/\1/p' "$RXDM")
PLUGIN_IMAGE=$(sed -n 's/^RXDM_TCPXO_PLUGIN_IMAGE=\([^ ]*\).*/\1/p' "$RXDM")
READY_LINE="Buffer manager initialization complete"
NODERUN=$CLUSTER_DIR/noderun  # each node sees its own empty tmpfs here (its /run)
READY=$NODERUN/rxdm.ready
DK=$CLUSTER_DIR/docker        # every dockerd's files; nothing of Docker's outside it but what cleanup removes
NODES=(node1 node2)
CONF=$CLUSTER_DIR/rxdm.conf
mkdir -p "$NODERUN" "$CLUSTER_DIR/aperture" "$DK/bin" "$DK/root/bin" "$DK/nvidia-lib64"
: >"$CLUSTER_DIR/aperture/0000:06:00.0"  # /dev/aperture_devices with a device in it
: >"$DK/dmabuf_import_helper"            # stands in for the dmabuf import helper's device node

# What exists of Docker's outside $DK before we start: what we create there is removed at the end.
before_run=$(ls -d /run/docker /run/containerd 2>/dev/null | xargs)
before_cgroups=$(ls -d /sys/fs/cgroup/*/docker 2>/dev/null | xargs)
iptables_before=$(iptables -S)
forward_before=$(iptables -S FORWARD | head -1)
iptables-save >"$CLUSTER_DIR/iptables.saved"

# --gpus all needs the NVIDIA hook on dockerd's PATH (Docker registers its GPU driver only then): a
# stand-in that counts its prestart calls. This machine's capability bounding set may lack some
# capabilities (a --privileged container asks for all the kernel has): a runc wrapper cuts the
# container's set to the bounding set, and says so once.
printf '#!/bin/sh\necho "$*" >>%s/gpu-hook.calls\ncat >/dev/null\n' "$DK" >"$DK/bin/nvidia-container-runtime-hook"
cat >"$DK/bin/runc-bounded" <<EOF
#!/bin/sh
bundle="" prev=""
for arg in "\$@"; do [ "\$prev" = --bundle ] && bundle=\$arg; prev=\$arg; done
if [ -n "\$bundle" ] && [ -f "\$bundle/config.json" ]; then
  python3 - "\$bundle/config.json" "$DK/bounding" <<'PY'
import json, sys
path, allowed = sys.argv[1], set(open(sys.argv[2]).read().split())
spec = json.load(open(path))
for kind, caps in spec.get("process", {}).get("capabilities", {}).items():
    spec["process"]["capabilities"][kind] = [c for c in caps if c in allowed]
json.dump(spec, open(path, "w"))
PY
fi
exec runc "\$@"
EOF
chmod 755 "$DK/bin/nvidia-container-runtime-hook" "$DK/bin/runc-bounded"
runtime_args=()
if [ "$(awk '/^CapBnd/ {print $2}' /proc/self/status)" != "$(printf '%016x' $(((1 << ($(cat /proc/sys/kernel/cap_last_cap) + 1)) - 1)))" ]; then
  command -v capsh >/dev/null || skip_because "this machine's capability bounding set lacks some capabilities (privileged containers fail) and there is no capsh (libcap2-bin) to name them"
  capsh --decode="$(awk '/^CapBnd/ {print $2}' /proc/self/status)" | sed 's/.*=//' | tr ',' '\n' | tr a-z A-Z >"$DK/bounding"
  echo "note: this machine's capability bounding set lacks some capabilities; containers run through $DK/bin/runc-bounded"
  runtime_args=(--add-runtime "bounded=$DK/bin/runc-bounded" --default-runtime bounded)
fi

# The image's root: busybox, RxDM's stand-in entrypoint and the NCCL plugin installer's.
cp /bin/busybox "$DK/root/bin/busybox"
for applet in sh sleep echo cat test; do ln -s busybox "$DK/root/bin/$applet"; done
cat >"$DK/root/rxdm" <<'EOF'
#!/bin/sh
# RxDM's stand-in: RXDM_BEHAVIOUR (from the image) is ready-after:SECONDS, never or die-after:SECONDS
trap 'echo "stand-in RxDM: stopping"; exit 0' TERM INT
echo "stand-in RxDM starting: $*"
case "$RXDM_BEHAVIOUR" in
  ready-after:*) sleep "${RXDM_BEHAVIOUR#ready-after:}"; echo "Buffer manager initialization complete" ;;
  die-after:*) sleep "${RXDM_BEHAVIOUR#die-after:}"; echo "stand-in RxDM: fatal error, exiting"; exit 1 ;;
esac
while :; do sleep 1 & wait $!; done
EOF
cat >"$DK/root/install" <<'EOF'
#!/bin/sh
# The NCCL plugin installer's stand-in: succeeds only when run as the prolog runs it, with the
# host's /var/lib mounted (where it would install); it writes nothing.
[ "$*" = "install --install-nccl" ] || { echo "unexpected arguments: $*"; exit 1; }
[ -f /var/lib/dpkg/status ] || { echo "the host's /var/lib is not mounted"; exit 1; }
echo "installed (stand-in)"
EOF
chmod 755 "$DK/root/rxdm" "$DK/root/install"
tar -C "$DK/root" -cf "$DK/root.tar" .

dk() { local node=$1; shift; timeout 60 "$DOCKER" --host "unix://$DK/$node/docker.sock" "$@"; }
dockerd_pid() { cat "$DK/$1/docker.pid" 2>/dev/null; }
start_dockerd() {
  local node=$1 dir=$DK/$1 _
  mkdir -p "$dir"
  # 9>&-: not the test's machine-wide lock
  PATH=$DK/bin:$PATH dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver vfs \
    --data-root "$dir/data" --exec-root "$dir/exec" --host "unix://$dir/docker.sock" --pidfile "$dir/docker.pid" \
    "${runtime_args[@]}" </dev/null >"$dir/dockerd.log" 2>&1 9>&- &
  local pid=$!
  for _ in $(seq 150); do
    dk "$node" version >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || return 1  # it gave up (its log says why)
    sleep 0.2
  done
  return 1
}
# stop_dockerd NODE: its containers removed, dockerd (and its containerd) ended, its mounts gone
stop_dockerd() {
  local node=$1 pid ids _ stray
  pid=$(dockerd_pid "$node")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -CONT "$pid" 2>/dev/null
    ids=$(dk "$node" ps -aq 2>/dev/null)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || dk "$node" rm -f $ids >/dev/null 2>&1
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  # its containerd and shims (started by it, with our paths in their command lines), if any outlived it
  for stray in $(pgrep -f "$DK/$node/"); do kill -KILL "$stray" 2>/dev/null; done
  findmnt -rn -o TARGET | grep "^$DK/$node/" | sort -r | xargs -r -n1 umount -l
}
cleanup_docker() {
  local node dir
  for node in "${NODES[@]}"; do stop_dockerd "$node"; done
  rm -rf "$DK"
  # Docker's directories outside $DK that these daemons created (empty now)
  for dir in /run/containerd/s /run/containerd /run/docker/plugins /run/docker; do
    case " $before_run " in *" ${dir%/*} "* | *" $dir "*) ;; *) rmdir "$dir" 2>/dev/null ;; esac
  done
  for dir in /sys/fs/cgroup/*/docker; do
    case " $before_cgroups " in *" $dir "*) ;; *) rmdir "$dir" 2>/dev/null ;; esac
  done
}
trap 'cleanup_docker; finish' EXIT

for node in "${NODES[@]}"; do
  if ! start_dockerd "$node"; then
    echo "SKIP: dockerd does not start here: $(tail -3 "$DK/$node/dockerd.log" | tr '\n' ' ')"
    exit 77
  fi
  for behaviour in ready-after:1 never die-after:0.5; do
    dk "$node" import --change "ENV RXDM_BEHAVIOUR=$behaviour" --change 'ENTRYPOINT ["/rxdm"]' \
      "$DK/root.tar" "rxdm-stand-in:${behaviour%%:*}" >/dev/null || { fail "docker import on $node"; exit 1; }
  done
  dk "$node" import --change 'ENTRYPOINT ["/install"]' "$DK/root.tar" "$PLUGIN_IMAGE" >/dev/null
done
echo "two dockerds ($("$DOCKER" --host "unix://$DK/node1/docker.sock" version --format '{{.Server.Version}}'), vfs) up after $((SECONDS - started_at)) s"
# behaviour NODE ready-after|never|die-after: what RxDM's image name runs on that node's Docker
behaviour() { dk "$1" tag "rxdm-stand-in:$2" "$TCPXO_IMAGE"; }

# The settings: each node's prolog talks to its own dockerd (slurmd sets SLURMD_NODENAME).
settings() {  # READY_TIMEOUT
  cat >"$CONF" <<EOC
RXDM_CONTAINER_CMD="$DOCKER --host unix://$DK/\${SLURMD_NODENAME}/docker.sock"
RXDM_MACHINE_TYPE=a3-megagpu-8g
RXDM_READY_TIMEOUT=$1
RXDM_POLL_INTERVAL=0.2
RXDM_RUNTIME_TIMEOUT=3
RXDM_APERTURE_DIR=$CLUSTER_DIR/aperture
RXDM_APERTURE_TIMEOUT=1
RXDM_KERNEL_MODULE=
RXDM_NVIDIA_LIB_DIR=$DK/nvidia-lib64
RXDM_DMABUF_DEVICE=$DK/dmabuf_import_helper
EOC
}
settings 20
for context in prolog epilog; do
  printf '#!/bin/sh\nGPUDIRECT_RXDM_CONFIG=%s exec %s\n' "$CONF" "$RXDM" >"$CLUSTER_DIR/$context"
  chmod +x "$CLUSTER_DIR/$context"
done
cluster up --plugin "$PLUGIN" --plugin-args "$(base_args rxdm_ready=$READY rxdm_timeout=3)" \
  --prolog "$CLUSTER_DIR/prolog" --epilog "$CLUSTER_DIR/epilog" --node-private "$NODERUN" >/dev/null ||
  { fail "the local cluster starts"; summary; exit 1; }
echo "the local cluster up after $((SECONDS - started_at)) s"
last_job() { squeue -h -t all -o '%i' 2>/dev/null | sort -n | tail -1; }
containers() { local node; for node in "${NODES[@]}"; do dk "$node" ps -a --format "$node {{.Names}}"; done | sort | xargs; }
# wait_epilog: until no job is left and no container on either node (15 s at most)
wait_epilog() {
  local deadline=$((SECONDS + 15))
  while [ $SECONDS -lt $deadline ]; do
    [ -z "$(squeue -h)" ] && [ -z "$(containers)" ] && return 0
    sleep 0.2
  done
  return 1
}

# 1. Through Slurm: RxDM ready after 1 s on both nodes. The job starts after that, and from inside
#    it each node's Docker shows the container running as the prolog asked.
behaviour node1 ready-after; behaviour node2 ready-after
: >"$DK/gpu-hook.calls"
format='{{.Config.Image}} {{.HostConfig.NetworkMode}} privileged={{.HostConfig.Privileged}} {{.HostConfig.CapAdd}} gpus={{range .HostConfig.DeviceRequests}}{{.Count}}{{.Capabilities}}{{end}} {{.HostConfig.Binds}} {{.Args}} running={{.State.Running}}'
started=$SECONDS
out=$(timeout 60 srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c \
  "echo \$(hostname) \$($DOCKER --host unix://$DK/\$(hostname)/docker.sock inspect -f '$format' receive-datapath-manager-\$SLURM_JOB_ID) \$(cat $READY)" 2>&1 | sort)
elapsed=$((SECONDS - started))
out=${out//\[CAP_NET_ADMIN\]/[NET_ADMIN]}  # newer clients send the capability with its CAP_ prefix
job=$(last_job)
line() { echo "$1 $TCPXO_IMAGE host privileged=true [NET_ADMIN] gpus=-1[[gpu]] [$DK/nvidia-lib64:/usr/local/nvidia/lib64 $DK/dmabuf_import_helper:/dev/dmabuf_import_helper] [--num_hops=2 --num_nics=8 --uid= --alsologtostderr] running=true job=$job container=receive-datapath-manager-$job mode=tcpxo"; }
expect_eq "real dockerd, RxDM ready after 1 s: the job runs; in it, each node's RxDM container runs with RxDM's image, host network, privileged, NET_ADMIN, all GPUs, the prolog's mounts and arguments; the ready file names it" \
  "$(line node1)
$(line node2)" "$out"
[ "$elapsed" -ge 1 ] && pass "... not before RxDM was ready (srun took $elapsed s)" || fail "... not before RxDM was ready (srun took $elapsed s)"
expect_eq "... Docker ran the GPU hook once per RxDM container (--gpus all)" "2" "$(grep -c prestart "$DK/gpu-hook.calls")"
wait_epilog && pass "... the epilog removes both containers (none left on either dockerd)" ||
  fail "... the epilog removes both containers (none left on either dockerd)" "$(containers)"
expect_eq "... no node drained" "" "$(sinfo -h -N -R -o '%N %E')"

# 2. Through Slurm: containers a crashed job left behind: on node1 an RxDM still running (job 999);
#    on node2 a stopped one with the name the next job's RxDM needs (job ids restart when
#    slurmctld's state is lost). The prolog removes both; the job runs.
next=$(($(last_job) + 1))
dk node1 run --detach --name receive-datapath-manager-999 rxdm-stand-in:never >/dev/null
dk node2 create --name "receive-datapath-manager-$next" rxdm-stand-in:never >/dev/null
out=$(timeout 60 srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c "cut -d' ' -f2 $READY" 2>&1)
expect_eq "leftover containers (one running, one stopped with this job's name): the prolog replaces them and the job runs" \
  "container=receive-datapath-manager-$next
container=receive-datapath-manager-$next" "$out"
wait_epilog && pass "... and no container is left on either node after the epilog" ||
  fail "... and no container is left on either node after the epilog" "$(containers)"

# The failure cases: the prolog run directly on node1, as slurmd runs it.
direct() {  # JOB [CONTEXT]: $rc, $err, $took
  local t0=$SECONDS
  err=$(cd / && timeout 40 env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_SCRIPT_CONTEXT="${2:-prolog}_slurmd" \
    SLURM_JOB_ID="$1" SLURMD_NODENAME=node1 SLURM_JOB_NODELIST=node[1-2] SLURM_JOB_NUM_NODES=2 SLURM_CONF="$SLURM_CONF" \
    GPUDIRECT_RXDM_CONFIG="$CONF" "$RXDM" 2>&1 >/dev/null)
  rc=$?
  took=$((SECONDS - t0))
}
reason() { sinfo -h -N -R -n node1 -o '%E'; }

# 3. RxDM never ready: the prolog fails after its 3 s timeout, drains the node with the cause and
#    removes the container it started.
settings 3
behaviour node1 never
direct 1001
expect_eq "never ready: the prolog fails with one line naming the timeout" \
  "1 gpudirect-rxdm: node1 job 1001: RxDM (receive-datapath-manager-1001) not ready after 3 s (no '$READY_LINE' in its log); check its log, or raise RXDM_READY_TIMEOUT in $CONF" "$rc $err"
[ "$took" -ge 3 ] && [ "$took" -le 8 ] && pass "... after its timeout, not before nor much later (${took} s for 3 s)" ||
  fail "... after its timeout, not before nor much later (${took} s for 3 s)"
expect_eq "... leaves no container behind" "" "$(containers)"
expect_contains "... and node1 drains with that line" "gpudirect-rxdm: node1 job 1001: RxDM (receive-datapath-manager-1001) not ready after 3 s" "$(reason)"

# 4. RxDM dies at once: the prolog fails fast, with the container's last log lines.
settings 20
behaviour node1 die-after
direct 1002
expect_eq "RxDM dies: the prolog fails with its last log" \
  "1 gpudirect-rxdm: node1 job 1002: the RxDM container receive-datapath-manager-1002 exited before it was ready (last log: stand-in RxDM starting: --num_hops=2 --num_nics=8 --uid= --alsologtostderr stand-in RxDM: fatal error, exiting ); check the image and 'docker logs' on the node" \
  "$rc $err"
[ "$took" -le 5 ] && pass "... fast (${took} s; its ready timeout is 20 s)" || fail "... fast (${took} s; its ready timeout is 20 s)"
expect_eq "... and leaves no container behind" "" "$(containers)"

# 5. dockerd hung (stopped with SIGSTOP): a clear failure within RXDM_RUNTIME_TIMEOUT, not a hang.
behaviour node1 ready-after
kill -STOP "$(dockerd_pid node1)"
direct 1003
kill -CONT "$(dockerd_pid node1)"
expect_eq "dockerd hung: the prolog fails, saying the runtime does not answer" \
  "1 gpudirect-rxdm: node1 job 1003: the container runtime does not answer ('$DOCKER --host unix://$DK/node1/docker.sock version' within 3 s: no answer); start it (systemctl start docker) or fix RXDM_CONTAINER_CMD in $CONF" \
  "$rc $err"
[ "$took" -le 8 ] && pass "... within its 3 s bound (${took} s)" || fail "... within its 3 s bound (${took} s)"

# 6. dockerd not running: a clear failure at once.
stop_dockerd node1
direct 1004
expect_contains "dockerd not running: the prolog fails, saying the runtime does not answer" \
  "gpudirect-rxdm: node1 job 1004: the container runtime does not answer ('$DOCKER --host unix://$DK/node1/docker.sock version' within 3 s: Cannot connect to the Docker daemon" "$rc $err"
[ "$rc" = 1 ] && [ "$took" -le 3 ] && pass "... exit 1, at once (${took} s)" || fail "... exit 1, at once (rc $rc, ${took} s)"
direct 1004 epilog
expect_eq "... and the epilog, bounded too, does not fail the node for it" "0 0" "$rc $([ "$took" -le 8 ] && echo 0 || echo "$took s")"

# The machine as it was: every dockerd and its containers gone, the firewall untouched.
cleanup_docker
expect_eq "every dockerd, containerd and container process of the test is gone" "" "$(pgrep -af "$DK/" | grep -v pgrep)"
expect_eq "no mount of theirs is left" "" "$(findmnt -rn -o TARGET | grep "^$DK/")"
forward_after=$(iptables -S FORWARD | head -1)
expect_eq "the FORWARD policy is unchanged (dockerd ran with --iptables=false)" "$forward_before" "$forward_after"
if [ "$(iptables -S)" = "$iptables_before" ]; then
  pass "... and so is every iptables rule"
else
  fail "... and so is every iptables rule: restored from iptables-save" "$(diff <(echo "$iptables_before") <(iptables -S))"
  iptables-restore <"$CLUSTER_DIR/iptables.saved"
fi
echo "wall time: $((SECONDS - started_at)) s after the lock"
summary
