#!/usr/bin/env bash
# A real Slurm on this machine, for tests and demos: a private munged, slurmctld, and N slurmd,
# each node in its own network + UTS namespace (hostname nodeN) with the interface names of a
# Google A3 Mega node (control NIC enp0s12, data NICs enp6s0 ... enp142s0), or with --machine
# a3ultra of an A3 Ultra / A4 node (gVNICs enp0s19 and enp192s20, RoCE netdevs gpu0rdma0 ...
# gpu7rdma0), or with --machine a4x of an A4X node (enp0s3, enp192s2, gpu0rdma0 ... gpu3rdma0), and
# 8 fake GPUs through gres (A4X: 4). Everything lives under one directory and `down` removes every trace.
# Several clusters coexist on one machine (the README's demo, a test's, an admin's real Slurm): each
# takes an instance number I whose ports, namespaces, bridges, links and subnets are its own, and
# every command touches only what its own cluster started.
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
CRED_EXPIRE=5
WANT_INSTANCE=0  # --instance: 0 (the default cluster: the demo's), N, or auto
CLAIMS=/run/gpudirect-local-cluster  # CLAIMS/I/owner: the directory of the cluster that holds instance I
MAX_INSTANCE=31
MACHINE=a3mega
GPUS_PER_NODE=8
CPUS_PER_NODE=16  # more than the machine has (SlurmdParameters=config_overrides): 8 tasks per node fit

usage() {
  cat <<'EOF'
Usage: scripts/local-cluster.sh COMMAND [options]

Commands:
  up        start munge, slurmctld and the nodes (restarts a cluster already running in DIR)
  down      stop everything `up` started in DIR and remove its namespaces and bridges (nothing else)
  status    show the daemons and sinfo
  env       print the line that points Slurm clients at this cluster (eval it, or source DIR/env.sh)
  logs      print the tail of every daemon log
  plugin    rewrite plugstack.conf (new steps pick it up; no restart needed)
  demo      build the project, start the cluster with the freshly built plugin, run a job that
            shows every task's GPU/NIC/CPU binding; the cluster stays up afterwards
  netns N   print the network namespace of node N of the cluster in DIR (e.g. gd-node1)

Options:
  --dir DIR             state, config and logs (default /tmp/gpudirect-cluster). Created with mode
                        0755; an existing one must be a directory (no symlink) owned by root and
                        writable by root alone, in directories that only root can rename entries of
  --instance I|auto     which of the machine's clusters this is, 0..31 (default 0). Instance 0 has
                        ports 16817/16818, namespaces gd-node1..., bridges gdbr0 and gddata0,
                        control subnet 10.99.0.0/24; instance I>0 ports 16817+200*I and up,
                        namespaces gdI-node1..., bridges gdIbr and gdIdata, subnet 10.99.I.0/24.
                        auto: the lowest free instance from 1 (0 stays for the demo). `up` refuses an
                        instance another running cluster holds, or whose ports or names are in use
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
  --cred-expire S       AuthInfo=cred_expire: a requeued job waits this + 1 s before it starts again
                        (default 5 to keep tests short; Slurm's own default is 120)
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
      --instance) WANT_INSTANCE=${2:?--instance needs a number or auto}; shift 2 ;;
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
      --cred-expire) CRED_EXPIRE=${2:?--cred-expire needs seconds}; shift 2 ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option '$1' (try --help)" ;;
    esac
  done
  case "$NODES" in [1-9]|[1-5][0-9]|6[0-4]) ;; *) die "--nodes must be between 1 and 64" ;; esac
  [[ "$CRED_EXPIRE" =~ ^[0-9]{1,5}$ ]] || die "--cred-expire must be a number of seconds, not '$CRED_EXPIRE'"
  case "$WANT_INSTANCE" in auto|[0-9]|[12][0-9]|3[01]) ;; *) die "--instance must be auto or 0..$MAX_INSTANCE, not '$WANT_INSTANCE'" ;; esac
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
  CONF=$DIR/etc/slurm.conf
}

# --- the cluster's directory -------------------------------------------------------------------
# Root writes config, a munge key and device nodes there and reads pid files it then kills: a
# directory another user owns, or can replace (a symlink in /tmp, a parent they can rename entries
# of), would let them choose what root writes and kills.

mode_of() { stat -c '%a' "$1"; }
owner_of() { stat -c '%u' "$1"; }

# safe_parents DIR: every directory above DIR (resolved) is root's, and only root can rename its
# entries (not writable by group or others, or sticky like /tmp).
safe_parents() {
  local p=$1 mode
  while :; do
    mode=$((8#$(mode_of "$p")))
    if [ "$(owner_of "$p")" != 0 ] || { [ $((mode & 8#022)) != 0 ] && [ $((mode & 8#1000)) = 0 ]; }; then
      die "$p (above the cluster directory) is not root's own (owner uid $(owner_of "$p"), mode $(mode_of "$p")): another user could replace the cluster directory; choose a --dir under root's directories, e.g. /tmp"
    fi
    [ "$p" = / ] && return 0
    p=$(dirname "$p")
  done
}

# resolve_dir CREATE: makes DIR absolute (its parents resolved, DIR itself not) and checks it; with
# CREATE=1 makes it (mode 0755, one mkdir, never through a link) when it does not exist.
resolve_dir() {
  local create=$1 parent base
  case "$DIR" in /*) ;; *) DIR=$PWD/$DIR ;; esac
  while [ "${DIR%/}" != "$DIR" ] && [ "$DIR" != / ]; do DIR=${DIR%/}; done
  base=$(basename "$DIR")
  case "$base" in /|.|..) die "--dir '$DIR': give the cluster its own directory, not / . or .." ;; esac
  parent=$(cd -P "$(dirname "$DIR")" 2>/dev/null && pwd) || die "the parent of --dir $DIR does not exist: create it first"
  DIR=${parent%/}/$base
  CONF=$DIR/etc/slurm.conf
  safe_parents "$parent"
  if [ -L "$DIR" ]; then
    die "$DIR is a symbolic link (to $(readlink "$DIR")): refusing to use it as the cluster directory; remove it (rm $DIR) or give another --dir"
  elif [ -e "$DIR" ]; then
    [ -d "$DIR" ] || die "$DIR exists and is not a directory: remove it or give another --dir"
    [ "$(owner_of "$DIR")" = 0 ] || die "$DIR is owned by uid $(owner_of "$DIR"), not root: refusing to use it as the cluster directory; remove it (rm -rf $DIR) or give another --dir"
    [ $((8#$(mode_of "$DIR") & 8#022)) = 0 ] || die "$DIR is writable by group or others (mode $(mode_of "$DIR")): refusing to use it as the cluster directory; remove it or give another --dir"
  elif [ "$create" = 1 ]; then
    mkdir -m 755 "$DIR" || die "could not create $DIR"
  else
    return 1
  fi
}

# --- instances: what one cluster owns on this machine --------------------------------------------

# use_instance I: the names, ports and subnets of instance I. Instance 0 keeps the names the docs
# show (gd-node1, gdbr0); the others' names match none of instance 0's, so an older
# local-cluster.sh that cleans up by pattern never takes them for its own.
use_instance() {
  INSTANCE=$1
  CTL_PORT=$((16817 + 200 * INSTANCE))
  SLURMD_PORT=$((CTL_PORT + 1))  # --no-netns: node i listens on SLURMD_PORT + 100 + i (< CTL_PORT + 200)
  CTL_NET=10.99.$INSTANCE
  if [ "$INSTANCE" = 0 ]; then
    NS_PREFIX=gd-node BRIDGE=gdbr0 DATA_BRIDGE=gddata0 VETH_PREFIX=gd VETH_NODE=""
    LINK_RE='^gd(c[0-9]+|[0-9]+[dh][0-9]+)$'
  else
    NS_PREFIX=gd$INSTANCE-node BRIDGE=gd${INSTANCE}br DATA_BRIDGE=gd${INSTANCE}data VETH_PREFIX=gd$INSTANCE VETH_NODE=n
    LINK_RE="^gd$INSTANCE(c[0-9]+|n[0-9]+[dh][0-9]+)\$"
  fi
}
data_net() { echo "10.98.$((8 * INSTANCE + $1))"; }  # data NIC k (k < 8)
host_net() { echo "10.97.$((2 * INSTANCE + $1))"; }  # host NIC k (k < 2)
ctl_veth() { echo "${VETH_PREFIX}c$1"; }
data_veth() { echo "$VETH_PREFIX$VETH_NODE${1}d$2"; }
host_veth() { echo "$VETH_PREFIX$VETH_NODE${1}h$2"; }
# own_netns: this instance's node namespaces that exist now
own_netns() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${NS_PREFIX}[0-9]+\$" || true; }
own_links() { ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "$LINK_RE" || true; }

# start_time PID: the process's start (clock ticks since boot), to tell it from a later one with its pid
start_time() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'; }

# daemons_alive DIR: a munged, slurmctld or slurmd that the cluster in DIR started is running
daemons_alive() {
  local f pid
  for f in "$1"/run/slurmctld.pid "$1"/munge/munged.pid "$1"/run/slurmd-*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null) || continue
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$1/" && return 0
  done
  return 1
}

# claim_holder I: the directory of the running cluster that holds instance I (empty: none). A claim
# whose cluster is gone (its daemons and its `up` ended, its directory moved on) is stale.
claim_holder() {
  local claim=$CLAIMS/$1 owner pid start
  [ -d "$claim" ] || return 0
  if [ ! -f "$claim/owner" ]; then
    # being written by an `up` that has just made it; one older than a minute was abandoned
    [ -n "$(find "$claim" -maxdepth 0 -mmin -1)" ] && echo "(an up in progress)"
    return 0
  fi
  { read -r owner; read -r pid start; } <"$claim/owner" || true
  [ "$owner" = "$DIR" ] && { echo "$owner"; return 0; }
  if [ -n "${pid:-}" ] && [ "$(start_time "$pid")" = "${start:-}" ]; then echo "$owner"; return 0; fi
  [ "$(cat "$owner/instance" 2>/dev/null)" = "$1" ] && daemons_alive "$owner" && echo "$owner"
  return 0
}

# with_claims_lock COMMAND...: claims are read and changed under one lock
with_claims_lock() {
  if [ -L "$CLAIMS" ] || { [ -e "$CLAIMS" ] && { [ ! -d "$CLAIMS" ] || [ "$(owner_of "$CLAIMS")" != 0 ] || [ $((8#$(mode_of "$CLAIMS") & 8#022)) != 0 ]; }; }; then
    die "$CLAIMS is not a directory of root's own (a link, or writable by others): remove it"
  fi
  [ -d "$CLAIMS" ] || mkdir -m 755 "$CLAIMS" 2>/dev/null || [ -d "$CLAIMS" ] || die "could not create $CLAIMS"
  local fd status=0
  exec {fd}>"$CLAIMS/lock"
  flock -w 60 "$fd" || die "$CLAIMS/lock was held for a minute"
  "$@" || status=$?
  exec {fd}>&-
  return "$status"
}

# take_claim I (under the claims lock): instance I for DIR, if no running cluster holds it (a stale
# claim is taken over)
take_claim() {
  local holder claim=$CLAIMS/$1
  holder=$(claim_holder "$1")
  [ -z "$holder" ] || [ "$holder" = "$DIR" ] || return 1
  local stale
  stale=$(head -1 "$claim/owner" 2>/dev/null || true)
  if [ -n "$stale" ] && [ "$stale" != "$DIR" ]; then
    # its cluster ended without `down` (killed, or the machine's daemons died): what is left of its
    # namespaces and bridges is no one's now
    say "instance $1: taking it over from $stale, whose cluster is gone; removing what is left of its network"
    remove_network "$1"
  fi
  rm -rf "$claim"
  mkdir -m 755 "$claim" || return 1
  printf '%s\n%s %s\n' "$DIR" "$$" "$(start_time $$)" >"$claim/owner.new" && mv "$claim/owner.new" "$claim/owner"
}

# drop_claim I: gives instance I back, if DIR holds it
drop_claim() {
  [ "$(head -1 "$CLAIMS/$1/owner" 2>/dev/null)" = "$DIR" ] && rm -rf "${CLAIMS:?}/$1"
  return 0
}

# in_use: what of this instance is taken on this machine now (empty: all free)
in_use() {
  local port ports=("$CTL_PORT" "$SLURMD_PORT") i busy=()
  if [ "$NETNS" = 0 ]; then for i in $(seq 1 "$NODES"); do ports+=($((SLURMD_PORT + 100 + i))); done; fi
  for port in "${ports[@]}"; do
    [ -z "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] || busy+=("port $port")
  done
  if [ "$NETNS" = 1 ]; then
    local ns link
    for ns in $(own_netns); do busy+=("namespace $ns"); done
    for link in "$BRIDGE" "$DATA_BRIDGE" $(own_links); do
      ip link show dev "$link" >/dev/null 2>&1 && busy+=("link $link")
    done
    [ -z "$(ip -4 -o addr show to "$CTL_NET.0/24" 2>/dev/null)" ] || busy+=("subnet $CTL_NET.0/24")
  fi
  echo "${busy[*]}"
}

# claim_instance: takes the instance --instance names (auto: the lowest free from 1) for DIR, and
# checks that its ports and names are free; records it in DIR/instance.
claim_instance() {
  local candidates i holder busy
  if [ "$WANT_INSTANCE" = auto ]; then candidates=$(seq 1 "$MAX_INSTANCE"); else candidates=$WANT_INSTANCE; fi
  for i in $candidates; do
    use_instance "$i"
    if ! with_claims_lock take_claim "$i"; then
      [ "$candidates" = "$i" ] || continue
      holder=$(with_claims_lock claim_holder "$i")
      die "instance $i (ports $CTL_PORT/$SLURMD_PORT, namespaces $NS_PREFIX*, bridge $BRIDGE) belongs to the cluster in $holder, which is running: stop it ($0 down --dir $holder) or give --instance auto"
    fi
    busy=$(in_use)
    if [ -n "$busy" ]; then
      with_claims_lock drop_claim "$i"
      [ "$candidates" = "$i" ] || continue
      die "instance $i is in use on this machine though no cluster of ours holds it ($busy): another Slurm or network uses it; give --instance auto"
    fi
    echo "$i" >"$DIR/instance"
    return 0
  done
  die "no free instance among 1..$MAX_INSTANCE (each running cluster holds one; see $CLAIMS)"
}

# recorded_instance: the instance of the cluster last started in DIR; a directory an older
# local-cluster.sh started (a config, no record) used instance 0's names. Empty: none.
recorded_instance() {
  local i
  i=$(cat "$DIR/instance" 2>/dev/null || true)
  case "$i" in [0-9]|[12][0-9]|3[01]) echo "$i" ;; "") [ ! -f "$CONF" ] || echo 0 ;; esac
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
netns_name() { echo "$NS_PREFIX$1"; }

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
AuthInfo=socket=$DIR/munge/munge.socket.2,cred_expire=$CRED_EXPIRE
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
  ip link add "$BRIDGE" type bridge || die "could not create bridge $BRIDGE"
  ip addr replace "$CTL_NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip link add "$DATA_BRIDGE" type bridge || die "could not create bridge $DATA_BRIDGE"
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
    veth "$(ctl_veth "$i")" "$CTRL_NIC" "$BRIDGE" "$CTL_NET.$((10 + i))"
    for k in "${!HOST_NICS[@]}"; do veth "$(host_veth "$i" "$k")" "${HOST_NICS[$k]}" "$BRIDGE" "$(host_net "$k").$((10 + i))"; done
    for k in "${!DATA_NICS[@]}"; do veth "$(data_veth "$i" "$k")" "${DATA_NICS[$k]}" "$DATA_BRIDGE" "$(data_net "$k").$((10 + i))"; done
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

# kill_tree PID: the process and everything below it
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill -9 "$1" 2>/dev/null || true
}

# own_stepds: the slurmstepd this cluster's slurmd started: a slurmstepd keeps its slurmd's working
# directory (DIR/log) and log file (DIR/log/slurmd-NODE.log). Only those of this root: one in a
# clean root (the release matrix's) sees its paths from there.
own_stepds() {
  local pid fd root
  root=$(stat -L -c '%d:%i' /)
  for pid in $(pgrep -x slurmstepd 2>/dev/null); do
    [ "$(stat -L -c '%d:%i' "/proc/$pid/root" 2>/dev/null)" = "$root" ] || continue
    if [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$DIR/log" ]; then echo "$pid"; continue; fi
    for fd in /proc/"$pid"/fd/*; do
      if [[ "$(readlink "$fd" 2>/dev/null)" == "$DIR/log/"* ]]; then echo "$pid"; break; fi
    done
  done
}

# stop_all: ends what the cluster in DIR started and nothing else: its daemons (their pid files and
# command lines name DIR), its steps (its slurmstepd, and what runs in its node
# namespaces), its namespaces, bridges and links (its own instance's names, and only while no other
# running cluster holds that instance), and gives its instance back.
stop_all() {
  local f pid re
  re=$(printf '%s' "$DIR" | sed 's/[][\.*^$+?(){}|]/\\&/g')
  for f in "$DIR"/run/slurmd-*.pid "$DIR"/run/slurmctld.pid "$DIR"/munge/munged.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    if tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$DIR/"; then kill "$pid" 2>/dev/null || true; fi
  done
  # anything else started with this config (DIR as a regular expression: its dots are dots)
  pkill -f "slurmd -f $re/etc/slurm\.conf( |\$)" 2>/dev/null || true
  pkill -f "slurmctld -f $re/etc/slurm\.conf( |\$)" 2>/dev/null || true
  pkill -f "munged --key-file=$re/" 2>/dev/null || true
  local deadline=$((SECONDS + 10))
  while [ $SECONDS -lt $deadline ] && pgrep -f "(slurmd|slurmctld) -f $re/etc/slurm\.conf( |\$)" >/dev/null; do sleep 0.1; done
  pkill -9 -f "(slurmd|slurmctld) -f $re/etc/slurm\.conf( |\$)" 2>/dev/null || true
  # Unfinished steps: this cluster's slurmstepd (with --no-netns they run beside every other
  # process of this machine), with their tasks.
  for pid in $(own_stepds); do kill_tree "$pid"; done
  rm -f "$DIR"/run/*.pid "$DIR"/munge/munged.pid
  local instance
  instance=$(recorded_instance)
  [ -z "$instance" ] || with_claims_lock remove_network "$instance"
  # state of the previous incarnation would bring old jobs back
  rm -rf "$DIR/state" "$DIR/spool"
}

# remove_network I (under the claims lock): the namespaces (and what runs in them), bridges and
# links of instance I, if DIR holds it or no running cluster does; then gives the claim back.
remove_network() {
  local holder ns pid link
  holder=$(claim_holder "$1")
  if [ -n "$holder" ] && [ "$holder" != "$DIR" ]; then
    say "instance $1 now belongs to the cluster in $holder: leaving its namespaces and bridges alone"
    return 0
  fi
  use_instance "$1"
  for ns in $(own_netns); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  done
  for ns in $(own_netns); do ip netns del "$ns" 2>/dev/null || true; done
  ip link del "$BRIDGE" 2>/dev/null || true
  ip link del "$DATA_BRIDGE" 2>/dev/null || true
  # A namespace the kernel has not freed yet (a test killed its processes) keeps its veths; their
  # host ends would collide with the next `up`. Deleting one end deletes the pair.
  for link in $(own_links); do ip link del "$link" 2>/dev/null || true; done
  drop_claim "$1"
}

cmd_up() {
  need_root; need_tools
  local started=$SECONDS
  stop_all
  claim_instance
  say "instance $INSTANCE: ports $CTL_PORT/$SLURMD_PORT$([ "$NETNS" = 1 ] && echo ", namespaces $(netns_name 1)..., bridges $BRIDGE and $DATA_BRIDGE, $CTL_NET.0/24")"
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
  [ "$HAVE_DIR" = 1 ] || { say "no cluster in $DIR"; return 0; }
  stop_all
  say "stopped; removed namespaces and bridges"
}

cmd_netns() {
  local instance
  instance=$(recorded_instance)
  [ -n "$instance" ] || die "no cluster was started in $DIR"
  use_instance "$instance"
  case "$1" in [1-9]|[1-5][0-9]|6[0-4]) netns_name "$1" ;; *) die "netns needs a node number 1..64" ;; esac
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
  local node=""
  if [ "$command" = netns ]; then node=${1:-}; [ $# -eq 0 ] || shift; fi
  parse_options "$@"
  # The directory first: root writes, reads and kills by what it holds. up and demo make it.
  HAVE_DIR=1
  case "$command" in
    up|demo) need_root; resolve_dir 1 ;;
    *) resolve_dir 0 || HAVE_DIR=0 ;;
  esac
  case "$command" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    logs) tail -n 20 "$DIR"/log/*.log ;;  # (a missing DIR: tail says so)
    plugin) cmd_plugin ;;
    demo) cmd_demo ;;
    netns) cmd_netns "$node" ;;
    *) die "unknown command '$command' (try --help)" ;;
  esac
}

main "$@"
