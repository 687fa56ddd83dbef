#!/usr/bin/env bash
# A real Slurm on this machine, for tests and demos: a private munged, slurmctld, and N slurmd,
# each node in its own network + UTS namespace (hostname nodeN) with the interface names of a
# Google A3 Mega node (control NIC enp0s12, data NICs enp6s0 ... enp142s0), or with --machine
# a3ultra of an A3 Ultra / A4 node (gVNICs enp0s19 and enp192s20, RoCE netdevs gpu0rdma0 ...
# gpu7rdma0), or with --machine a4x of an A4X node (enp0s3, enp192s2, gpu0rdma0 ... gpu3rdma0), and
# 8 fake GPUs through gres (A4X: 4). Everything lives under one directory and `down` removes every trace.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

DIR=/tmp/gpudirect-cluster
NODES=2
PLUGIN=""
PLUGIN_ARGS=""
NETNS=1
PROLOG=""
EPILOG=""
NODE_PRIVATE=""
CONSTRAIN_DEVICES=0
SLURM_GCP=0
CTL_PORT=16817
SLURMD_PORT=16818
BRIDGE=gdbr0
DATA_BRIDGE=gddata0
CTL_NET=10.99.0
MACHINE=a3mega
GPUS_PER_NODE=8
CPUS_PER_NODE=16  # more than the machine has (SlurmdParameters=config_overrides): 8 tasks per node fit

usage() {
  cat <<'EOF'
Usage: scripts/local-cluster.sh COMMAND [options]

Commands:
  up        start munge, slurmctld and the nodes (restarts a cluster already running in DIR)
  down      stop everything `up` started and remove its namespaces and bridges
  status    show the daemons and sinfo
  env       print the line that points Slurm clients at this cluster (eval it, or source DIR/env.sh)
  logs      print the tail of every daemon log
  plugin    rewrite plugstack.conf (new steps pick it up; no restart needed)
  demo      build the project, start the cluster with the freshly built plugin, run a job that
            shows every task's GPU/NIC/CPU binding; the cluster stays up afterwards

Options:
  --dir DIR             state, config and logs (default /tmp/gpudirect-cluster)
  --nodes N             number of nodes, 1..64 (default 2)
  --plugin PATH         spank_gpudirect.so to list in plugstack.conf (default: none)
  --plugin-args "ARGS"  its plugstack arguments, e.g. "default=off topology=/path/topo.xml"
  --prolog PATH         Prolog= in slurm.conf (with PrologFlags=Alloc: it runs when a job starts)
  --epilog PATH         Epilog= in slurm.conf
  --node-private DIR    an existing directory that each node sees as its own empty tmpfs (like a
                        node's own /run), e.g. for files a prolog creates per node (needs netns)
  --constrain-devices   TaskPlugin=task/cgroup with ConstrainDevices=yes: each task sees only its
                        GPUs, numbered from 0 in CUDA_VISIBLE_DEVICES (the fake GPUs are then
                        character devices 195:N, like /dev/nvidiaN, instead of links to /dev/null)
  --slurm-gcp           the node configuration slurm-gcp writes: --constrain-devices, and also
                        TaskPlugin=task/cgroup,task/affinity, ProctrackType=proctrack/cgroup,
                        ConstrainCores=yes (each task's cgroup holds only its CPUs)
  --machine NAME        the nodes' interface names: a3mega (enp0s12; enp6s0 ... enp142s0, the
                        default) or a3ultra (A3 Ultra and A4: enp0s19, enp192s20; gpu0rdma0 ...
                        gpu7rdma0; veths only, no RDMA devices: give the plugin a topology file)
                        or a4x (a4x-highgpu-4g: enp0s3, enp192s2; gpu0rdma0 ... gpu3rdma0; 4 fake
                        GPUs per node; tests/fixtures/a4x-highgpu-4g.xml is its topology file)
  --no-netns            run every slurmd on localhost with its own port instead of in a namespace
                        (tasks then share this machine's hostname and interfaces)
  -h, --help            this help

Needs root and the Debian packages that scripts/install-deps.sh installs.
EOF
}

say() { printf 'local-cluster: %s\n' "$*"; }
die() { printf 'local-cluster: error: %s\n' "$*" >&2; exit 1; }

parse_options() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) DIR=${2:?--dir needs a value}; shift 2 ;;
      --nodes) NODES=${2:?--nodes needs a value}; shift 2 ;;
      --plugin) PLUGIN=${2:?--plugin needs a value}; shift 2 ;;
      --plugin-args) PLUGIN_ARGS=${2-}; shift 2 ;;
      --prolog) PROLOG=${2:?--prolog needs a path}; shift 2 ;;
      --epilog) EPILOG=${2:?--epilog needs a path}; shift 2 ;;
      --node-private) NODE_PRIVATE=${2:?--node-private needs a directory}; shift 2 ;;
      --machine) MACHINE=${2:?--machine needs a3mega, a3ultra or a4x}; shift 2 ;;
      --no-netns) NETNS=0; shift ;;
      --constrain-devices) CONSTRAIN_DEVICES=1; shift ;;
      --slurm-gcp) SLURM_GCP=1; CONSTRAIN_DEVICES=1; shift ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option '$1' (try --help)" ;;
    esac
  done
  case "$NODES" in [1-9]|[1-5][0-9]|6[0-4]) ;; *) die "--nodes must be between 1 and 64" ;; esac
  # CTRL_NIC carries the cluster's own traffic (default route); HOST_NICS are further host-side
  # NICs on their own subnet; DATA_NICS the per-GPU NICs, on the data bridge.
  case "$MACHINE" in
    a3mega) CTRL_NIC=enp0s12; HOST_NICS=(); DATA_NICS=(enp6s0 enp7s0 enp13s0 enp14s0 enp134s0 enp135s0 enp141s0 enp142s0) ;;
    a3ultra) CTRL_NIC=enp0s19; HOST_NICS=(enp192s20); DATA_NICS=(gpu0rdma0 gpu1rdma0 gpu2rdma0 gpu3rdma0 gpu4rdma0 gpu5rdma0 gpu6rdma0 gpu7rdma0) ;;
    a4x) CTRL_NIC=enp0s3; HOST_NICS=(enp192s2); DATA_NICS=(gpu0rdma0 gpu1rdma0 gpu2rdma0 gpu3rdma0); GPUS_PER_NODE=4 ;;
    *) die "--machine must be a3mega, a3ultra or a4x, not '$MACHINE'" ;;
  esac
  [ "$MACHINE" = a3mega ] || [ "$NETNS" = 1 ] || die "--machine $MACHINE needs the nodes' own namespaces (drop --no-netns)"
  [ -z "$PLUGIN" ] || [ -f "$PLUGIN" ] || die "plugin $PLUGIN does not exist (build it: cmake --preset release && cmake --build --preset release)"
  local script
  for script in "$PROLOG" "$EPILOG"; do
    [ -z "$script" ] || [ -x "$script" ] || die "prolog/epilog $script is not an executable file"
  done
  [ -z "$NODE_PRIVATE" ] || [ -d "$NODE_PRIVATE" ] || die "--node-private $NODE_PRIVATE is not a directory"
  [ -z "$NODE_PRIVATE" ] || [ "$NETNS" = 1 ] || die "--node-private needs the nodes' own namespaces (drop --no-netns)"
  [ -z "$PLUGIN" ] || PLUGIN=$(cd "$(dirname "$PLUGIN")" && pwd)/$(basename "$PLUGIN")
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  CONF=$DIR/etc/slurm.conf
}

need_root() { [ "$(id -u)" -eq 0 ] || die "run as root (it starts daemons and creates network namespaces)"; }

need_tools() {
  local missing=()
  for tool in munged slurmctld slurmd srun sinfo ip nsenter unshare; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  [ ${#missing[@]} -eq 0 ] || die "missing ${missing[*]}: run scripts/install-deps.sh first"
}

# slurm_at_least MAJOR.MINOR: the installed slurmd is that release or newer ("slurm-wlm 20.11.4").
slurm_at_least() {
  local have
  have=$(slurmd -V | awk '{print $2}')
  [ "$(printf '%s\n%s\n' "$1" "$have" | sort -V | head -1)" = "$1" ]
}

node_name() { echo "node$1"; }
netns_name() { echo "gd-node$1"; }

write_plugstack() {
  if [ -n "$PLUGIN" ]; then
    printf 'required %s %s\n' "$PLUGIN" "$PLUGIN_ARGS" >"$DIR/etc/plugstack.conf"
  else
    : >"$DIR/etc/plugstack.conf"
  fi
}

# slurm-gcp's order (its slurm.conf template): cgroup first, then affinity.
task_plugins() {
  if [ "$SLURM_GCP" = 1 ]; then echo task/cgroup,task/affinity
  elif [ "$CONSTRAIN_DEVICES" = 1 ]; then echo task/cgroup
  else echo task/none; fi
}

write_config() {
  mkdir -p "$DIR"/{etc,state,spool,log,run,munge,dev}
  chmod 755 "$DIR" "$DIR/munge"
  rm -f "$DIR"/dev/nvidia[0-9]
  for ((i = 0; i < GPUS_PER_NODE; i++)); do
    # The devices cgroup allows and denies by major:minor: each fake GPU needs its own numbers.
    if [ "$CONSTRAIN_DEVICES" = 1 ]; then mknod "$DIR/dev/nvidia$i" c 195 "$i"; else ln -s /dev/null "$DIR/dev/nvidia$i"; fi
  done
  local host ctl_addr
  host=$(hostname)
  if [ "$NETNS" = 1 ]; then ctl_addr=$CTL_NET.1; else ctl_addr=127.0.0.1; fi
  cat >"$CONF" <<EOF
# Written by scripts/local-cluster.sh: a real Slurm on one machine for tests and demos.
ClusterName=gpudirect
SlurmctldHost=$host($ctl_addr)
SlurmctldPort=$CTL_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire: a requeued job waits this + 1 s before it starts again (Slurm's default 120 s)
AuthInfo=socket=$DIR/munge/munge.socket.2,cred_expire=5
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
PlugStackConfig=$DIR/etc/plugstack.conf
ProctrackType=$([ "$SLURM_GCP" = 1 ] && echo proctrack/cgroup || echo proctrack/linuxproc)
TaskPlugin=$(task_plugins)
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# schedule pending (requeued) jobs within 2 s instead of the default 30-60 s
SchedulerParameters=sched_interval=2,bf_interval=2
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
# Slurm's default 10 s per RPC is too short for slurmctld on two busy cores with 64 nodes: srun then
# fails with "Socket timed out on send/recv operation" (seen with 24.11 while CI built beside it).
MessageTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=60
EOF
  [ -z "$PROLOG" ] || printf 'Prolog=%s\nPrologFlags=Alloc\n' "$PROLOG" >>"$CONF"
  [ -z "$EPILOG" ] || printf 'Epilog=%s\n' "$EPILOG" >>"$CONF"
  local i
  for i in $(seq 1 "$NODES"); do
    if [ "$NETNS" = 1 ]; then
      echo "NodeName=$(node_name "$i") NodeAddr=$CTL_NET.$((10 + i)) CPUs=$CPUS_PER_NODE Boards=1 SocketsPerBoard=2 CoresPerSocket=$((CPUS_PER_NODE / 2)) ThreadsPerCore=1 RealMemory=1000 Gres=gpu:$GPUS_PER_NODE State=UNKNOWN" >>"$CONF"
    else
      echo "NodeName=$(node_name "$i") NodeHostname=$host NodeAddr=127.0.0.1 Port=$((SLURMD_PORT + 100 + i)) CPUs=$CPUS_PER_NODE Boards=1 SocketsPerBoard=2 CoresPerSocket=$((CPUS_PER_NODE / 2)) ThreadsPerCore=1 RealMemory=1000 Gres=gpu:$GPUS_PER_NODE State=UNKNOWN" >>"$CONF"
    fi
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$CONF"
  { cat /etc/hosts; echo "# nodes of the local cluster (scripts/local-cluster.sh)"
    for i in $(seq 1 "$NODES"); do echo "$CTL_NET.$((10 + i)) $(node_name "$i")"; done; } >"$DIR/etc/hosts"
  cat >"$DIR/etc/gres.conf" <<EOF
AutoDetect=off
Name=gpu File=$DIR/dev/nvidia[0-$((GPUS_PER_NODE - 1))]
EOF
  # CgroupPlugin= came with Slurm 21.08; slurmd 20.11 refuses to start on a key it does not know.
  { slurm_at_least 21.08 && echo "CgroupPlugin=cgroup/v1"
    cat <<EOF
ConstrainDevices=$([ "$CONSTRAIN_DEVICES" = 1 ] && echo yes || echo no)
ConstrainCores=$([ "$SLURM_GCP" = 1 ] && echo yes || echo no)
EOF
  } >"$DIR/etc/cgroup.conf"
  write_plugstack
  echo "export SLURM_CONF=$CONF" >"$DIR/env.sh"
}

start_munge() {
  [ -f "$DIR/munge/munge.key" ] || { dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none; chmod 400 "$DIR/munge/munge.key"; }
  munged --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket.2" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munge.seed" --force \
    || die "munged did not start: $(tail -3 "$DIR/log/munged.log" 2>/dev/null)"
}

# The nodes' links, in two `ip -batch` runs instead of one `ip` per command (64 nodes have 576 veth
# pairs): here the namespaces and veth pairs, host ends on the bridges (control NIC and host NICs on
# BRIDGE, data NICs on DATA_BRIDGE); then inside each namespace its addresses and default route.
make_network() {
  ip link add "$BRIDGE" type bridge 2>/dev/null || true
  ip addr replace "$CTL_NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip link add "$DATA_BRIDGE" type bridge 2>/dev/null || true
  ip link set "$DATA_BRIDGE" up
  local i k ns host_batch=$DIR/run/links.batch
  : >"$host_batch"
  # veth HOST_END NAME BRIDGE ADDR: one pair, NAME with ADDR/24 inside the node's namespace
  veth() {
    printf 'link add %s type veth peer name %s netns %s\nlink set %s master %s up\n' "$1" "$2" "$ns" "$1" "$3" >>"$host_batch"
    printf 'addr add %s/24 dev %s\nlink set %s up\n' "$4" "$2" "$2" >>"$DIR/run/$ns.batch"
  }
  for i in $(seq 1 "$NODES"); do
    ns=$(netns_name "$i")
    ip netns add "$ns"
    printf 'link set lo up\n' >"$DIR/run/$ns.batch"
    veth "gdc$i" "$CTRL_NIC" "$BRIDGE" "$CTL_NET.$((10 + i))"
    for k in "${!HOST_NICS[@]}"; do veth "gd${i}h$k" "${HOST_NICS[$k]}" "$BRIDGE" "10.97.$k.$((10 + i))"; done
    for k in "${!DATA_NICS[@]}"; do veth "gd${i}d$k" "${DATA_NICS[$k]}" "$DATA_BRIDGE" "10.98.$k.$((10 + i))"; done
    printf 'route add default via %s\n' "$CTL_NET.1" >>"$DIR/run/$ns.batch"
  done
  ip -batch "$host_batch" || die "could not create the nodes' links (ip -batch $host_batch)"
  for i in $(seq 1 "$NODES"); do
    ns=$(netns_name "$i")
    ip -n "$ns" -batch "$DIR/run/$ns.batch" || die "could not configure $ns (ip -n $ns -batch $DIR/run/$ns.batch)"
  done
}

start_daemons() {
  slurmctld -f "$CONF" || die "slurmctld did not start: $(tail -5 "$DIR/log/slurmctld.log" 2>/dev/null)"
  local i name private=""
  [ -z "$NODE_PRIVATE" ] || private="mount -t tmpfs -o mode=755 gpudirect-node '$NODE_PRIVATE' && "
  for i in $(seq 1 "$NODES"); do
    name=$(node_name "$i")
    if [ "$NETNS" = 1 ]; then
      # Own UTS and mount namespaces: the node's hostname, and an /etc/hosts that resolves every node.
      nsenter --net="/run/netns/$(netns_name "$i")" unshare --uts --mount \
        sh -c "mount --bind '$DIR/etc/hosts' /etc/hosts && ${private}hostname $name && exec slurmd -f '$CONF' -N $name" \
        || die "slurmd $name did not start: $(tail -5 "$DIR/log/slurmd-$name.log" 2>/dev/null)"
    else
      slurmd -f "$CONF" -N "$name" || die "slurmd $name did not start: $(tail -5 "$DIR/log/slurmd-$name.log" 2>/dev/null)"
    fi
  done
}

wait_idle() {
  local limit=$((40 + NODES)) states
  local deadline=$((SECONDS + limit))
  while [ $SECONDS -lt $deadline ]; do
    states=$(SLURM_CONF=$CONF sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
    if [ "$states" = "idle " ]; then return 0; fi
    sleep 0.2
  done
  say "nodes did not become idle within $limit s (states: ${states:-none}); last log lines:" >&2
  tail -n 5 "$DIR"/log/*.log >&2 || true
  return 1
}

stop_all() {
  local f pid
  for f in "$DIR"/run/slurmd-*.pid "$DIR"/run/slurmctld.pid "$DIR"/munge/munged.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  # slurmstepd of unfinished steps, and anything else started with this config
  pkill -f "slurmd -f $DIR/etc/slurm.conf" 2>/dev/null || true
  pkill -f "slurmctld -f $DIR/etc/slurm.conf" 2>/dev/null || true
  pkill -f "munged --key-file=$DIR/" 2>/dev/null || true
  local deadline=$((SECONDS + 10))
  while [ $SECONDS -lt $deadline ] && pgrep -f "(slurmd|slurmctld) -f $DIR/etc/slurm.conf" >/dev/null; do sleep 0.1; done
  pkill -9 -f "(slurmd|slurmctld) -f $DIR/etc/slurm.conf" 2>/dev/null || true
  # Unfinished steps' slurmstepd and tasks: whatever is left in this cluster's node namespaces, and
  # (nodes on localhost ports) a slurmstepd in this shell's own pid namespace. Never every
  # slurmstepd the host can see: that killed the steps of another cluster in a pid namespace of its
  # own (the release matrix's, which CI runs beside this one), and its srun waited for ever.
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk '/^gd-node/ {print $1}'); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  done
  pkill -9 --ns $$ --nslist pid slurmstepd 2>/dev/null || true
  rm -f "$DIR"/run/*.pid "$DIR"/munge/munged.pid
  for ns in $(ip netns list 2>/dev/null | awk '/^gd-node/ {print $1}'); do ip netns del "$ns" 2>/dev/null || true; done
  ip link del "$BRIDGE" 2>/dev/null || true
  ip link del "$DATA_BRIDGE" 2>/dev/null || true
  # A namespace the kernel has not freed yet (a test killed its processes) keeps its veths; their
  # host ends would collide with the next `up`. Deleting one end deletes the pair.
  local link
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E '^gd(c[0-9]+|[0-9]+[dh][0-9]+)$'); do
    ip link del "$link" 2>/dev/null || true
  done
  # state of the previous incarnation would bring old jobs back
  rm -rf "$DIR/state" "$DIR/spool"
}

cmd_up() {
  need_root; need_tools
  local started=$SECONDS
  stop_all
  say "config in $DIR/etc (nodes: $NODES, $([ "$NETNS" = 1 ] && echo "network namespaces" || echo "localhost ports"), $GPUS_PER_NODE fake GPUs each)"
  write_config
  [ -n "$PLUGIN" ] && say "plugstack.conf: required $PLUGIN $PLUGIN_ARGS"
  start_munge
  [ "$NETNS" = 1 ] && make_network
  start_daemons
  wait_idle || { stop_all; die "the cluster did not come up"; }
  say "up in $((SECONDS - started)) s: $(SLURM_CONF=$CONF sinfo -h -o '%D nodes %P %T')"
  say "use it with: source $DIR/env.sh   (stop it with: $0 down --dir $DIR)"
}

cmd_down() {
  need_root
  stop_all
  say "stopped; removed namespaces and bridges"
}

cmd_status() {
  pgrep -af "(munged --key-file=$DIR/|slurmctld -f $DIR/|slurmd -f $DIR/)" || say "no daemons running for $DIR"
  [ -f "$CONF" ] && SLURM_CONF=$CONF sinfo 2>/dev/null || true
}

cmd_plugin() {
  [ -f "$CONF" ] || die "no cluster config in $DIR: run up first"
  write_plugstack
  say "plugstack.conf: $(cat "$DIR/etc/plugstack.conf")"
}

cmd_demo() {
  need_root
  "$here/install-deps.sh"
  local build=$repo/build/release
  if [ ! -x "$build/launcher/gpudirect-launch" ] || [ ! -f "$build/plugin/spank_gpudirect.so" ]; then
    say "building (cmake --preset release)"
    (cd "$repo" && cmake --preset release >/dev/null && cmake --build --preset release)
  fi
  # The TCPXO plugin itself only exists on A3 Mega images: the demo's lib dir holds a stand-in
  # that loads and exports ncclNetPlugin_v8, so the plugin's lib-dir check and the doctor's load
  # check pass. No NCCL runs in this demo.
  mkdir -p "$DIR/tcpxo-lib"
  cp "$build/tests/net_plugin/loads/libnccl-net.so" "$DIR/tcpxo-lib/libnccl-net.so"
  PLUGIN=$build/plugin/spank_gpudirect.so
  PLUGIN_ARGS="default=off topology=$repo/tests/fixtures/local-a3mega-2cpu.xml lib_dir=$DIR/tcpxo-lib profile_dir=$repo/profiles"
  cmd_up
  say "placeholder TCPXO lib dir: $DIR/tcpxo-lib (a stand-in libnccl-net.so; real nodes have Google's plugin there)"
  local job=(srun -N"$NODES" --ntasks-per-node=8 --gpus-per-node=8 --gpu-direct=tcpxo,verbose "$build/launcher/gpudirect-launch" doctor)
  say "running: ${job[*]}"
  SLURM_CONF=$CONF "${job[@]}"
  cat <<EOF

local-cluster: the cluster is still up. Try:
  source $DIR/env.sh
  srun -N2 --ntasks-per-node=8 --gpus-per-node=8 --gpu-direct=tcpxo env | grep -E '^(NCCL_FASTRAK_IFNAME|GPUDIRECT_)' | sort | uniq -c
  srun -N1 -n1 $build/launcher/gpudirect-launch doctor --plugstack $DIR/etc/plugstack.conf
Stop it with: $0 down --dir $DIR
EOF
}

main() {
  [ $# -ge 1 ] || { usage; exit 6; }
  local command=$1; shift
  case "$command" in
    -h|--help|help) usage; exit 0 ;;
  esac
  parse_options "$@"
  case "$command" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    logs) tail -n 20 "$DIR"/log/*.log ;;
    plugin) cmd_plugin ;;
    demo) cmd_demo ;;
    *) die "unknown command '$command' (try --help)" ;;
  esac
}

main "$@"
