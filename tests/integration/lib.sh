# Shared by the integration tests: a private local cluster with the freshly built plugin, and
# pass/fail bookkeeping that ends with the "N passed, M failed" line.
set -uo pipefail

SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${GPUDIRECT_BUILD_DIR:-$SRC/build/release}
PLUGIN=$BUILD/plugin/spank_gpudirect.so
LAUNCH=$BUILD/launcher/gpudirect-launch
CLUSTER_DIR=$(mktemp -d /tmp/gpudirect-it.XXXXXX)
chmod 755 "$CLUSTER_DIR"
TOPOLOGY=$SRC/tests/fixtures/local-a3mega-2cpu.xml
LIB_DIR=$CLUSTER_DIR/tcpxo-lib
source "$SRC/tests/integration/checks.sh"

[ "$(id -u)" -eq 0 ] || { echo "integration tests need root (Slurm daemons, network namespaces)"; exit 1; }
# One test cluster at a time on this machine. Each cluster has ports, namespaces and bridges of its
# own (local-cluster.sh --instance auto: never the demo's instance 0, nor another running one's), so a
# user's cluster may run beside a test; the lock keeps the tests, which load the machine, one by one.
exec 9>/tmp/gpudirect-local-cluster.lock
flock -w 1200 9 || { echo "another local-cluster test held the lock for 20 minutes"; exit 1; }
[ -f "$PLUGIN" ] || { echo "no plugin at $PLUGIN: build first"; exit 1; }
# A plugin-only build (-DGPUDIRECT_BUILD_LAUNCHER=OFF, as on Debian 11 whose GCC 10 cannot build
# gpudirect-launch) has no launcher. Only where the caller says so (GPUDIRECT_NO_LAUNCHER=1, as
# tests/platforms/release_matrix.sh does for such a build) do the checks that run it become SKIP
# lines, counted in the summary; otherwise they run, and a missing launcher fails them.
if [ "${GPUDIRECT_NO_LAUNCHER:-0}" = 1 ]; then
  [ ! -e "$LAUNCH" ] || { echo "GPUDIRECT_NO_LAUNCHER=1, yet $LAUNCH exists"; exit 1; }
  HAVE_LAUNCHER=0
else
  HAVE_LAUNCHER=1
fi
with_launcher() { [ "$HAVE_LAUNCHER" = 1 ]; }
# slurm_at_least MAJOR.MINOR: the cluster's Slurm (this machine's slurmd) is that release or newer,
# for the few checks whose right answer is Slurm's own behaviour and differs between releases.
SLURM_VERSION=$(slurmd -V | awk '{print $2}')
slurm_at_least() { [ "$(printf '%s\n%s\n' "$1" "$SLURM_VERSION" | sort -V | head -1)" = "$1" ]; }

mkdir -p "$LIB_DIR"
# Stands in for Google's TCPXO NCCL plugin: a library that loads and exports ncclNetPlugin_v8, as
# the plugin's lib-dir check and the doctor's load check want (no NCCL runs here).
STANDIN_NET_PLUGIN=$BUILD/tests/net_plugin/loads/libnccl-net.so
[ -f "$STANDIN_NET_PLUGIN" ] || { echo "no stand-in NCCL plugin at $STANDIN_NET_PLUGIN: build first"; exit 1; }
cp "$STANDIN_NET_PLUGIN" "$LIB_DIR/libnccl-net.so"

# srun and salloc print informational lines ("job N queued and waiting for resources", "has been
# allocated resources") when the previous job's nodes are still completing: on a busy machine they
# would land in the output the tests compare. Every srun and salloc of a test (through timeout, env,
# bash -c or a program such as health) finds these wrappers first on PATH and runs --quiet, which
# keeps errors and drops only the informational lines.
mkdir -p "$CLUSTER_DIR/bin"
for tool in srun salloc; do
  printf '#!/bin/sh\nexec %s --quiet "$@"\n' "$(command -v "$tool")" >"$CLUSTER_DIR/bin/$tool"
  chmod 755 "$CLUSTER_DIR/bin/$tool"
done
export PATH=$CLUSTER_DIR/bin:$PATH

# 9>&-: the daemons the cluster starts must not inherit (and keep holding) the machine-wide lock.
cluster() { "$SRC/scripts/local-cluster.sh" "$@" --dir "$CLUSTER_DIR" --instance auto 9>&-; }
# node_netns N: the network namespace of node N of this test's cluster (after `up`)
node_netns() { cluster netns "$1"; }
base_args() { echo "default=off topology=$TOPOLOGY lib_dir=$LIB_DIR profile_dir=$SRC/profiles $*"; }
cluster_up() { cluster up --plugin "$PLUGIN" --plugin-args "$(base_args "$@")" >/dev/null || { echo "cluster did not start"; exit 1; }; }
set_plugin_args() { cluster plugin --plugin "$PLUGIN" --plugin-args "$*" >/dev/null; }
# An empty plugstack.conf: slurmstepd loads no plugin at all (the baseline of perf/launch_overhead.sh).
empty_plugstack() { cluster plugin >/dev/null; }
finish() {
  cluster down >/dev/null 2>&1
  rm -rf "$CLUSTER_DIR"
}
trap finish EXIT
export SLURM_CONF=$CLUSTER_DIR/etc/slurm.conf

# The libfabric provider ranks on different hosts use by default: net where this libfabric has it.
if fi_info -p net >/dev/null 2>&1; then ACROSS_PROVIDER=net; else ACROSS_PROVIDER="tcp;ofi_rxm"; fi
# verdict_nodes TABLE VERDICT: the nodes a health table gives that verdict (BAD, good), space separated
verdict_nodes() { printf '%s\n' "$1" | awk -v v="$2" '$3 == v {print $1}' | tr '\n' ' '; }
# in_service_nodes: the nodes Slurm would give a job (not drained, down or failing), space separated
in_service_nodes() { sinfo -h -N -o '%N %T' | awk '$2 ~ /^(idle|mixed|allocated|completing)$/ {print $1}' | sort -uV | tr '\n' ' '; }
# Waits up to 60 s until slurmctld has every node responding again (no '*' in sinfo's state): seen
# once in a fresh Debian 12 root on a loaded machine, six nodes 'idle*' a few seconds after they were
# resumed, and a sweep then skipped them.
wait_nodes_responding() {
  local _
  for _ in $(seq 300); do
    grep -q '\*' < <(sinfo -h -N -o '%T') || return 0
    sleep 0.2
  done
  echo "nodes still not responding after 60 s: $(sinfo -h -N -o '%N %T' | grep '\*' | tr '\n' ' ')"
}
summary() {
  echo "$passed passed, $failed failed$([ "$skipped" -eq 0 ] || echo ", $skipped skipped (no gpudirect-launch)")"
  [ "$failed" -eq 0 ]
}
