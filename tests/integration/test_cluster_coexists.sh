#!/usr/bin/env bash
# A test cluster beside a user's: README's `local-cluster.sh demo` leaves its cluster up (instance 0:
# ports 16817/16818, gd-node*, gdbr0) and `run-tests.sh` then starts one test cluster after another
# in the same shell. Each must take ports and names of its own, and its `down` must leave the user's
# daemons, namespaces, bridges and running steps alone. Also: the cluster directory is refused when
# another user could have chosen it (a symlink, a directory not root's own).
source "$(dirname "$0")/lib.sh"

script=$SRC/scripts/local-cluster.sh
claims=/run/gpudirect-local-cluster
user_dir=$(mktemp -d /tmp/gpudirect-user.XXXXXX)
chmod 755 "$user_dir"
probe=$CLUSTER_DIR/probe
mkdir -p "$probe"
sleeper=""
adopted=0
# stop_srun PID: srun and the helper it forks (which would wait for its step, holding the test's
# output open)
stop_srun() { pkill -9 -P "$1" 2>/dev/null; kill -9 "$1" 2>/dev/null; }
cleanup() {
  [ -z "$sleeper" ] || stop_srun "$sleeper"
  if [ "$adopted" = 0 ]; then
    "$script" down --dir "$user_dir" >/dev/null 2>&1 9>&-
    rm -rf "$user_dir"
  fi
  # the stale claim planted below, where no `up` took it over (an older local-cluster.sh)
  if [ -n "${stale:-}" ] && [ "$(head -1 "$claims/$stale/owner" 2>/dev/null)" = "$CLUSTER_DIR/gone" ]; then
    ip link del "gd${stale}br" 2>/dev/null
    rm -rf "${claims:?}/$stale"
  fi
  finish
}
trap cleanup EXIT

# --- the directory: refused when another user could have chosen what root writes there --------
target=$probe/target
mkdir -p "$target"
# refused NAME DIR CAUSE: `up --dir DIR` exits non-zero naming CAUSE and writes nothing into DIR.
refused() {
  local out status
  out=$(timeout 120 "$script" up --dir "$2" --nodes 1 9>&- 2>&1)
  status=$?
  [ "$status" != 0 ] || "$script" down --dir "$2" >/dev/null 2>&1 9>&-
  if [ "$status" != 0 ] && grep -q "$3" <<<"$out" && [ -z "$(ls -A "$2")" ]; then
    pass "$1"
  else
    fail "$1" "exit $status, $(ls -A "$2" | wc -l) entries written there; output: $out"
  fi
}
link=$probe/link
ln -s "$target" "$link"
refused "up refuses a cluster directory that is a symlink" "$link" 'symbolic link'
theirs=$probe/theirs
mkdir -m 755 "$theirs"
chown 65534 "$theirs"
refused "up refuses a cluster directory another user owns" "$theirs" 'not root'

# --- the user's cluster (instance 0, as the demo's), then a test cluster beside it -------------
# Where README's demo cluster is up (instance 0 taken), it is the user's cluster: used, never stopped.
demo_dir=$(head -1 "$claims/0/owner" 2>/dev/null)
if [ -n "$demo_dir" ] && [ -f "$demo_dir/etc/slurm.conf" ] && SLURM_CONF=$demo_dir/etc/slurm.conf timeout 30 sinfo >/dev/null 2>&1; then
  rm -rf "$user_dir"
  user_dir=$demo_dir
  adopted=1
  pass "the user's cluster is up (the demo's, in $demo_dir)"
elif out=$("$script" up --dir "$user_dir" --nodes 1 9>&- 2>&1); then
  pass "the user's cluster starts"
else
  fail "the user's cluster starts" "$out"
  summary
  exit 1
fi
user_conf=$user_dir/etc/slurm.conf
user_ns=$("$script" netns 1 --dir "$user_dir")
expect_eq "the user's cluster has instance 0's names" "gd-node1" "$user_ns"
# A claim whose cluster is gone (its directory removed, its up long ended), with a bridge it left:
# the next `up --instance auto` takes that instance over and clears what was left.
stale=""
for i in $(seq 1 31); do [ -e "$claims/$i" ] || { stale=$i; break; }; done
if [ -n "$stale" ] && ! ip link show dev "gd${stale}br" >/dev/null 2>&1; then
  mkdir -p "$claims/$stale"
  printf '%s\n%s\n' "$CLUSTER_DIR/gone" "999999999 1" >"$claims/$stale/owner"
  ip link add "gd${stale}br" type bridge
fi
cluster_up
pass "a test cluster starts beside it"
test_ns=$(node_netns 1)
if [ -n "$stale" ]; then
  expect_eq "a stale claim is taken over (instance $stale)" "gd$stale-node1 $CLUSTER_DIR" "$test_ns $(head -1 "$claims/$stale/owner" 2>/dev/null)"
fi
[ "$test_ns" != "$user_ns" ] && pass "the test cluster has namespaces of its own ($test_ns)" || fail "the test cluster has namespaces of its own" "$test_ns"

expect_eq "a job runs on the user's cluster" "node1" "$(SLURM_CONF=$user_conf timeout 60 srun -w node1 -N1 -n1 hostname 2>&1)"
expect_eq "a job runs on the test cluster" "node1
node2" "$(timeout 60 srun -N2 --ntasks-per-node=1 hostname 2>&1 | sort)"

# A step of the user's that is running when the test cluster goes down.
SLURM_CONF=$user_conf srun -w node1 -N1 -n1 sleep 120 9>&- >/dev/null 2>&1 &
sleeper=$!
disown "$sleeper"  # its end (killed in cleanup) is no news
stepd=""
for _ in $(seq 300); do
  for pid in $(ip netns pids "$user_ns" 2>/dev/null); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] && stepd=$pid
  done
  [ -n "$stepd" ] && break
  sleep 0.2
done
[ -n "$stepd" ] || fail "the user's step has a slurmstepd"
user_daemons=$(cat "$user_dir/run/slurmctld.pid" "$user_dir/munge/munged.pid" "$user_dir"/run/slurmd-*.pid | tr '\n' ' ')

cluster down >/dev/null 2>&1

alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
dead=""
for pid in $user_daemons; do alive "$pid" || dead+=" $pid"; done
expect_eq "the test cluster's down leaves the user's daemons running" "" "$dead"
missing=""
ip netns list | awk '{print $1}' | grep -qx "$user_ns" || missing+=" namespace $user_ns"
for link in gdbr0 gddata0; do ip link show dev "$link" >/dev/null 2>&1 || missing+=" bridge $link"; done
expect_eq "the test cluster's down leaves the user's namespaces and bridges" "" "$missing"
if [ -n "$stepd" ] && alive "$stepd" && kill -0 "$sleeper" 2>/dev/null; then
  pass "the test cluster's down leaves the user's running step alone"
else
  fail "the test cluster's down leaves the user's running step alone" "slurmstepd ${stepd:-none}, srun $sleeper: $(SLURM_CONF=$user_conf squeue 2>&1)"
fi
# Nodes on localhost ports (--no-netns): the test cluster's step daemons run in no namespace of
# their own, beside the user's; its down ends its own and no other.
if cluster up --nodes 1 --no-netns >/dev/null 2>&1; then
  srun -N1 -n1 sleep 120 9>&- >/dev/null 2>&1 &
  own_srun=$!
  disown "$own_srun"
  own=""
  for _ in $(seq 300); do
    for pid in $(pgrep -x slurmstepd); do
      [ "$(readlink "/proc/$pid/cwd")" = "$CLUSTER_DIR/log" ] && own=$pid
    done
    [ -n "$own" ] && break
    sleep 0.2
  done
  [ -n "$own" ] || fail "the --no-netns test cluster's step has a slurmstepd"
  cluster down >/dev/null 2>&1
  stop_srun "$own_srun"
  if [ -n "$own" ] && ! alive "$own"; then pass "down --no-netns ends its own slurmstepd"; else fail "down --no-netns ends its own slurmstepd" "pid $own"; fi
  if [ -n "$stepd" ] && alive "$stepd"; then pass "down --no-netns leaves the user's step alone"; else fail "down --no-netns leaves the user's step alone" "slurmstepd ${stepd:-none}"; fi
else
  fail "a --no-netns test cluster starts beside the user's"
fi
expect_eq "the user's cluster still runs jobs" "node1" "$(SLURM_CONF=$user_conf timeout 60 srun -w node1 -N1 -n1 hostname 2>&1)"
left=$(ip netns list | awk '{print $1}' | grep -x "$test_ns" || true)
expect_eq "the test cluster's down removes its own namespaces" "" "$left"
summary
