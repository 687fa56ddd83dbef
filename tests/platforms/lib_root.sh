# shellcheck shell=bash
# Clean Debian roots for the platform tests (image_build_clean_root.sh, release_matrix.sh): one
# implementation of making a root and of entering it. Sourced; needs root, debootstrap, unshare,
# pivot_root and the Debian archive.
#
# A root is debootstrap --variant=minbase of a release plus that release's slurmd and libslurm-dev
# (standing in for a node image's Slurm), cached as a tarball in ROOT_CACHE_DIR so that only the
# first use of a release pays for debootstrap.

ROOT_CACHE_DIR=${GPUDIRECT_ROOT_CACHE:-/var/cache/gpudirect-slurm}
ROOT_MIRROR=${GPUDIRECT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
ROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# root_suite NAME: Debian's codename for NAME (unstable is sid), so that both spellings share a cache.
root_suite() {
  case "$1" in
    unstable) echo sid ;;
    *) echo "$1" ;;
  esac
}

root_tarball_path() { echo "$ROOT_CACHE_DIR/debian-$(root_suite "$1")-minbase-slurm.tar.gz"; }

# root_run [--net host|private] [--cgroups NAME] [--hostname NAME] [--bind HOSTDIR:ROOTDIR]...
#          [--overlay LOWER:UPPER] ROOT -- COMMAND...
# Runs COMMAND inside ROOT in private mount, pid, uts and ipc namespaces, entered with pivot_root:
# under a plain chroot /proc/PID/exe of the root's processes, and nsenter's view of them, would
# point at the host's file system. A fresh /proc, /sys, /run and /dev/shm; the host's /dev.
#   --net private  a network namespace of its own with only lo (the local cluster's bridges and node
#                  namespaces then never meet the host's, where CI may run its own cluster);
#                  default host (apt needs the network)
#   --cgroups NAME the cgroup v1 controllers mounted at /sys/fs/cgroup, rooted at a child NAME of
#                  this process's own cgroups (a cgroup namespace): Slurm's task/cgroup in the root
#                  makes its slurm/uid_0/job_N/... there, never beside a host Slurm's of the same
#                  job ids. The caller removes them with root_cgroups_remove NAME.
#   --overlay LOWER:UPPER  ROOT is an overlay of the read-only LOWER and the writable UPPER (on the
#                  same file system, with UPPER.work beside it); nothing is ever written to LOWER.
# Every mount is made inside the private mount namespace: when COMMAND ends (and with it the pid
# namespace's first process, whose end kills every process left in it) nothing stays mounted.
# Killing root_run's unshare kills the namespace too.
root_run() {
  local net=host cgroups="" hostname="" overlay="" binds=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --net) net=$2; shift 2 ;;
      --cgroups) cgroups=$2; shift 2 ;;
      --hostname) hostname=$2; shift 2 ;;
      --bind) binds+=("$2"); shift 2 ;;
      --overlay) overlay=$2; shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  local root=$1; shift
  [ "${1-}" = -- ] && shift
  # --kill-child: if unshare is killed (the caller stopped), so is the namespace's first process,
  # and with it every process in the namespace.
  local unshare=(unshare --mount --pid --fork --kill-child --uts --ipc)
  [ "$net" = private ] && unshare+=(--net)
  local controllers=""
  if [ -n "$cgroups" ]; then
    unshare+=(--cgroup)
    controllers=$(root_cgroups_make "$cgroups") || return 1
  fi
  # The outer shell moves itself into the run's cgroups first (then its cgroup namespace is rooted
  # there); the inner one, in the new namespaces, mounts and pivots.
  # shellcheck disable=SC2016
  bash -c '
    set -e
    for c in $1; do echo $$ >"/sys/fs/cgroup/$c/$(root_cgroup_base "$c")/$2/cgroup.procs"; done
    shift 2
    exec "$@"' root_run "$controllers" "$cgroups" "${unshare[@]}" -- bash -c '
    set -e
    root=$1 overlay=$2 net=$3 controllers=$4 hostname=$5 binds=$6; shift 6
    mount --make-rprivate /
    if [ -n "$overlay" ]; then
      lower=${overlay%%:*} upper=${overlay#*:}
      mkdir -p "$upper" "$upper.work" "$root"
      mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$upper.work" "$root"
    else
      mount --bind "$root" "$root"  # pivot_root needs a mount point
    fi
    mount --rbind /dev "$root/dev"
    mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
    mount -t proc proc "$root/proc"
    mount -t sysfs sysfs "$root/sys"
    mount -t tmpfs -o mode=755 run "$root/run"
    mkdir -p "$root/run/lock"
    if [ -n "$controllers" ]; then
      mount -t tmpfs -o mode=755 cgroup "$root/sys/fs/cgroup"
      for c in $controllers; do
        mkdir -p "$root/sys/fs/cgroup/$c"
        mount -t cgroup -o "$c" cgroup "$root/sys/fs/cgroup/$c"
      done
    fi
    for b in $binds; do
      mkdir -p "$root${b#*:}"
      mount --bind "${b%%:*}" "$root${b#*:}"
    done
    [ "$net" = private ] && ip link set lo up
    [ -z "$hostname" ] || hostname "$hostname"
    cd "$root"
    mkdir -p .old-root
    pivot_root . .old-root
    cd /
    umount -l /.old-root
    rmdir /.old-root
    # This shell stays the namespace'"'"'s first process (pid 1), which inherits every orphan: daemons
    # that fork away (munged, slurmctld, slurmd, slurmstepd) become its children when they exit,
    # and bash reaps any child while it waits. A pid 1 that does not (COMMAND itself, or timeout)
    # leaves them zombies that a step waiting for its processes to end can wait on for ever.
    env -i PATH="$ROOT_PATH" HOME=/root LANG=C.UTF-8 TERM=dumb "$@" &
    command=$!
    status=0
    wait "$command" || status=$?
    exit "$status"' \
    root_run_inner "$root" "$overlay" "$net" "$controllers" "$hostname" "${binds[*]+"${binds[*]}"}" "$@"
}
export ROOT_PATH

# The cgroup v1 controllers this machine mounts at /sys/fs/cgroup/NAME (one controller each), and the
# path of this process's own cgroup in one of them.
root_cgroup_controllers() {
  local c
  for c in cpuset cpu cpuacct memory devices freezer pids blkio; do
    [ "$(stat -f -c %T "/sys/fs/cgroup/$c" 2>/dev/null)" = cgroupfs ] && echo "$c"
  done
  return 0
}
root_cgroup_base() { awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup | head -1; }
export -f root_cgroup_base

# root_cgroups_make NAME: a child NAME of this process's cgroup in every v1 controller; prints the
# controllers. cpuset's child has no CPUs or memory nodes until given its parent's.
root_cgroups_make() {
  local c dir controllers
  controllers=$(root_cgroup_controllers)
  [ -n "$controllers" ] || { echo "lib_root: no cgroup v1 controllers under /sys/fs/cgroup" >&2; return 1; }
  for c in $controllers; do
    dir=/sys/fs/cgroup/$c/$(root_cgroup_base "$c")/$1
    mkdir -p "$dir"
    if [ "$c" = cpuset ]; then
      cat "$dir/../cpuset.cpus" >"$dir/cpuset.cpus"
      cat "$dir/../cpuset.mems" >"$dir/cpuset.mems"
    fi
  done
  echo $controllers
}

# root_cgroups_remove NAME: the run's cgroups, deepest first (Slurm's job and step cgroups a killed
# slurmstepd left). Processes are gone by then: the pid namespace ended with its first process.
root_cgroups_remove() {
  local c dir
  for c in $(root_cgroup_controllers); do
    dir=/sys/fs/cgroup/$c/$(root_cgroup_base "$c")/$1
    [ -d "$dir" ] || continue
    find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ ! -d "$dir" ] || echo "lib_root: could not remove cgroup $dir (processes left in it?)" >&2
  done
  return 0
}

# root_make_tarball SUITE LOG: the cached tarball of SUITE's clean root with Slurm, made (debootstrap,
# then slurmd and libslurm-dev) when missing. Prints its path.
root_make_tarball() {
  local suite tarball work
  suite=$(root_suite "$1")
  tarball=$(root_tarball_path "$suite")
  if [ ! -f "$tarball" ]; then
    command -v debootstrap >/dev/null || { echo "lib_root: needs debootstrap (apt-get install debootstrap)" >&2; return 1; }
    work=$(mktemp -d /var/tmp/gpudirect-root-$suite.XXXXXX)
    chmod 755 "$work"  # it becomes the root's /, which mktemp made 0700: no user but root could use it
    echo "lib_root: debootstrap --variant=minbase $suite (log $2; cached afterwards in $tarball)" >&2
    if ! debootstrap --variant=minbase "$suite" "$work" "$ROOT_MIRROR" >"$2" 2>&1; then
      rm -rf --one-file-system "$work"
      echo "lib_root: debootstrap $suite failed (log: $2)" >&2
      return 1
    fi
    cp /etc/resolv.conf "$work/etc/resolv.conf"
    # A mirror that is a snapshot (as here) serves sid's Release file after its Valid-Until (sid's
    # lasts a week), and apt then refuses the whole suite. A throwaway test root accepts it.
    echo 'Acquire::Check-Valid-Until "false";' >"$work/etc/apt/apt.conf.d/99gpudirect-test-root"
    # Debian's slurm packages start their daemons on install unless policy-rc.d says no.
    printf '#!/bin/sh\nexit 101\n' >"$work/usr/sbin/policy-rc.d"
    chmod 0755 "$work/usr/sbin/policy-rc.d"
    if ! root_run "$work" -- sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurmd libslurm-dev && apt-get clean' >>"$2" 2>&1; then
      rm -rf --one-file-system "$work"
      echo "lib_root: installing slurmd and libslurm-dev in the $suite root failed (log: $2)" >&2
      return 1
    fi
    mkdir -p "$ROOT_CACHE_DIR"
    tar -czf "$tarball.tmp" -C "$work" . && mv -f "$tarball.tmp" "$tarball"
    rm -rf --one-file-system "$work"
  fi
  echo "$tarball"
}
