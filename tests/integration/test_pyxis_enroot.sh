#!/usr/bin/env bash
# --gpu-direct tasks in real pyxis/enroot containers on the local cluster (docs/containers.md).
# pyxis and enroot are not Debian packages and this repository holds neither: the test takes an
# installed pair and, where either is missing, says so and exits 77 (ctest: skipped):
#   GPUDIRECT_PYXIS_PLUGIN  spank_pyxis.so (default: Slurm's plugin dir, then /usr/local/lib/slurm)
#   GPUDIRECT_ENROOT_BIN    the directory of the `enroot` to use (default: the one on PATH); its
#                           sysconfdir (ENROOT_SYSCONF_PATH) is read from that script
# What it sets up, and removes at exit: our hook in enroot's hooks.d (as the .deb installs it),
# a drop-in in enroot.conf.d giving each node its own enroot runtime, data and cache dirs (the local
# cluster's nodes share one file system, and two nodes' `enroot create pyxis_JOB.STEP` would
# collide), plugstack.conf as `include plugstack.conf.d/*.conf` with gpudirect.conf and
# pyxis.conf, the host paths the profiles mount (/dev/aperture_devices, /usr/local/gib/configs;
# /run/tcpx-JOB from a prolog, as RxDM's) where they are missing, and a squashfs image made here with mksquashfs from a busybox root whose
# /etc/environment sets NCCL_* and LD_LIBRARY_PATH as NGC images do.
# Checks, for tcpxo, tcpx (2 nodes x 2 tasks, a3mega layout) and gib (a3ultra layout), as root
# and as an ordinary user (nobody): inside the container each task's CPU affinity, GPUDIRECT_* and
# NCCL_* equal those of the same task without a container (NCCL_DEBUG excepted: the profile's ?=
# lets the image's value win); the lib dir, tuner files, device and socket dirs are there,
# read-only where the profile says; LD_LIBRARY_PATH starts with the lib dir and resolves
# libnccl-net.so. Without our hook the image's own values reach the tasks (the check can fail).
set -euo pipefail

skip() { echo "SKIPPED: $*"; exit 77; }
ENROOT_DIR=${GPUDIRECT_ENROOT_BIN:-$(dirname "$(command -v enroot 2>/dev/null || echo /nonexistent/enroot)")}
[ -x "$ENROOT_DIR/enroot" ] || skip "no enroot installed (not on PATH; GPUDIRECT_ENROOT_BIN names its directory): pyxis/enroot containers did not run"
PYXIS=${GPUDIRECT_PYXIS_PLUGIN:-}
if [ -z "$PYXIS" ]; then
  for candidate in /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_pyxis.so /usr/lib/aarch64-linux-gnu/slurm-wlm/spank_pyxis.so \
    /usr/local/lib/slurm/spank_pyxis.so; do
    [ -f "$candidate" ] && PYXIS=$candidate && break
  done
fi
[ -n "$PYXIS" ] && [ -f "$PYXIS" ] || skip "no pyxis plugin (spank_pyxis.so in Slurm's plugin dir; GPUDIRECT_PYXIS_PLUGIN names it): pyxis/enroot containers did not run"
command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools) to make the test image: pyxis/enroot containers did not run"
SYSCONF=$(sed -n 's|^config::export ENROOT_SYSCONF_PATH *"\(.*\)"$|\1|p' "$ENROOT_DIR/enroot")
[ -d "$SYSCONF/hooks.d" ] || { echo "enroot at $ENROOT_DIR names no sysconfdir with a hooks.d (read '$SYSCONF')"; exit 1; }

# lib.sh's checks go on after a failed one (its own set -uo pipefail, without -e).
set +e
source "$(dirname "$0")/lib.sh"
USER_PROGRAM=$BUILD/tests/net_plugin/net_plugin_user
[ -x "$USER_PROGRAM" ] || { echo "no $USER_PROGRAM: build first"; exit 1; }
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || { echo "no static busybox at /bin/busybox: apt-get install busybox-static"; exit 1; }

work=$CLUSTER_DIR/pyxis
mkdir -p "$work"
hook=$SYSCONF/hooks.d/50-gpudirect.sh
dropin=$SYSCONF/enroot.conf.d/90-gpudirect-slurm-test.conf
created=()  # host paths this test made, removed at exit
[ ! -e "$hook" ] || mv "$hook" "$work/hook.before"
cleanup() {
  local path
  rm -f "$hook" "$dropin"
  [ ! -e "$work/hook.before" ] || mv "$work/hook.before" "$hook"
  for path in ${created[@]+"${created[@]}"}; do rm -rf "$path"; done
  finish
}
trap cleanup EXIT

# Our hook as the package installs it, pointing at this build's gpudirect-launch.
sed "s|^launch=/usr/bin/gpudirect-launch\$|launch=$LAUNCH|" "$SRC/scripts/enroot/hooks.d/50-gpudirect.sh" >"$hook"
chmod 755 "$hook"
# Each node its own enroot dirs, by its host name (enroot evaluates the values). Not SLURMD_NODENAME:
# pyxis removes the container at the step's end with an environment that lacks it.
mkdir -p "$work/enroot" && chmod 1777 "$work/enroot"
for node in node1 node2; do
  for kind in run cache data; do mkdir -p "$work/enroot/$node/$kind" && chmod 1777 "$work/enroot/$node/$kind"; done
done
printf '%s\n' "ENROOT_RUNTIME_PATH $work/enroot/\$(uname -n)/run/\$(id -u)" \
  "ENROOT_CACHE_PATH $work/enroot/\$(uname -n)/cache/\$(id -u)" \
  "ENROOT_DATA_PATH $work/enroot/\$(uname -n)/data/\$(id -u)" >"$dropin"

# Host paths the profiles mount, where this machine lacks them (an A3 Mega or A4 node has them).
printf 'tuner: tcpxo\n' >"$LIB_DIR/a3plus_tuner_config.textproto"
printf 'guest: tcpxo\n' >"$LIB_DIR/a3plus_guest_config.textproto"
chmod 755 "$LIB_DIR"
if [ ! -e /dev/aperture_devices ]; then mkdir -m 1777 /dev/aperture_devices && created+=(/dev/aperture_devices); fi
if [ ! -e /usr/local/gib ]; then mkdir -p /usr/local/gib/configs && created+=(/usr/local/gib); fi
[ -f /usr/local/gib/configs/tuner_config_a3u.txtpb ] || printf 'tuner: a3u\n' >/usr/local/gib/configs/tuner_config_a3u.txtpb
# RxDM's socket dir for TCPX, per job, as its prolog makes it.
printf '#!/bin/sh\nmkdir -p -m 1777 /run/tcpx-$SLURM_JOB_ID\n' >"$work/prolog"
printf '#!/bin/sh\nrm -rf /run/tcpx-$SLURM_JOB_ID\n' >"$work/epilog"
chmod 755 "$work/prolog" "$work/epilog"

# The image: busybox, the program that needs libnccl-net.so (with its C library), and an
# /etc/environment as NGC images have it.
root=$work/image
mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/proc" "$root/sys" "$root/dev" "$root/run" "$root/root"
cp /bin/busybox "$root/bin/busybox"
for applet in sh env cat ls touch echo grep sed sort cut awk id mkdir rm; do ln -s busybox "$root/bin/$applet"; done
cp "$USER_PROGRAM" "$root/bin/net_plugin_user"
for lib in $(ldd "$USER_PROGRAM" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
  case "$lib" in */libnccl-net.so) continue ;; esac
  mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
done
printf '%s\n' NCCL_SOCKET_IFNAME=eth0 NCCL_NET=Socket NCCL_BUFFSIZE=4194304 NCCL_DEBUG=INFO NCCL_IB_HCA=mlx5 \
  LD_LIBRARY_PATH=/usr/local/nvidia/lib64 >"$root/etc/environment"
IMAGE=$work/busybox-ngc-env.sqsh
mksquashfs "$root" "$IMAGE" -quiet -noappend -all-root >/dev/null
chmod 644 "$IMAGE"

# cluster_up MACHINE: the local cluster with our plugin and the prolog; then plugstack.conf as
# Debian's slurm packages lay it out, `include plugstack.conf.d/*.conf`, with our gpudirect.conf and
# pyxis's pyxis.conf (Slurm reads them in the glob's order: ours first). The nodes' slurmd (and so
# pyxis) find enroot on PATH.
cluster_up() {
  rm -rf "$work"/enroot/node*/*/*  # a restarted cluster numbers its jobs from 1 again
  PATH=$ENROOT_DIR:$PATH cluster up --machine "$1" --plugin "$PLUGIN" --plugin-args "$(base_args)" \
    --prolog "$work/prolog" --epilog "$work/epilog" >/dev/null || { echo "cluster did not start"; exit 1; }
  local etc=$CLUSTER_DIR/etc
  mkdir -p "$work/pyxis-run" "$etc/plugstack.conf.d"
  mv "$etc/plugstack.conf" "$etc/plugstack.conf.d/gpudirect.conf"
  printf 'required %s runtime_path=%s\n' "$PYXIS" "$work/pyxis-run" >"$etc/plugstack.conf.d/pyxis.conf"
  printf 'include %s/plugstack.conf.d/*.conf\n' "$etc" >"$etc/plugstack.conf"
}

# What a task reports: CPUs, GPUDIRECT_* and NCCL_* (NCCL_DEBUG and this test's own settings
# apart), one line each, by rank.
report='cpus=$(grep Cpus_allowed_list /proc/self/status | cut -f2); echo "$SLURM_PROCID cpus=$cpus"
env | grep -E "^(GPUDIRECT_|NCCL_)" | grep -vE "^(NCCL_DEBUG|GPUDIRECT_(BUILD_DIR|SOURCE_DIR|ENROOT_BIN|PYXIS_PLUGIN))=" | sort |
  sed "s/^/$SLURM_PROCID /"'
# expect_same NAME EXPECTED ACTUAL: as expect_eq, showing the difference (the lists are long).
expect_same() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "$(diff <(printf '%s\n' "$2") <(printf '%s\n' "$3"))"; fi; }
# What a task sees of a directory the mode mounts, inside only: missing, or whether it takes writes.
probe='probe() { if [ ! -d "$1" ]; then echo "$1 missing"; elif err=$(touch "$1/.probe-$SLURM_PROCID" 2>&1); then rm -f "$1/.probe-$SLURM_PROCID"; echo "$1 rw"; else echo "$1 ro: ${err##*: }"; fi; }'

# run_as USER CMD...: root runs it as is; another user through runuser, from a directory it can read.
run_as() {
  local user=$1
  shift
  if [ "$user" = root ]; then (cd "$work" && "$@"); else (cd /tmp && runuser -u "$user" -- "$@"); fi
}

# check MODE USER TUNER KEPT DIRS...: the same tasks (2 nodes x 2) with and without the container
# (each its own job: /run/tcpx-<job> reads /run/tcpx-JOB); inside, KEPT are the image's variables
# the mode does not set (NAME=VALUE, space-separated), which stay. Inside (a task on each node): the mode's mounted
# DIRS, each "DIR ro|rw" (/run/tcpx-JOB: the job's), the file NCCL_TUNER_CONFIG_PATH names holding
# TUNER, LD_LIBRARY_PATH, and the program that needs libnccl-net.so.
check() {
  local mode=$1 user=$2 tuner=$3 kept=$4
  shift 4
  local srun_args=(-N2 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct="$mode")
  local outside inside seen expected="" entry rank
  outside=$(run_as "$user" srun "${srun_args[@]}" sh -c "$report" 2>&1 | sed 's|/run/tcpx-[0-9]*|/run/tcpx-JOB|' | sort)
  inside=$(run_as "$user" srun "${srun_args[@]}" --container-image="$IMAGE" sh -c "$report" 2>&1 | sed 's|/run/tcpx-[0-9]*|/run/tcpx-JOB|' | sort)
  expect_same "$mode as $user: in the container every task's CPUs, GPUDIRECT_* and NCCL_* are those outside${kept:+ (and from the image $kept)}" \
    "$({ printf '%s\n' "$outside"; for rank in 0 1 2 3; do for entry in $kept; do echo "$rank $entry"; done; done; } | sort)" "$inside"
  grep -q "^3 GPUDIRECT_MODE=$mode\$" <<<"$outside" || fail "$mode as $user: 4 tasks ran with --gpu-direct=$mode" "$outside"
  for entry in "$@"; do
    expected+="${entry% *} $([ "${entry##* }" = ro ] && echo 'ro: Read-only file system' || echo rw)"$'\n'
  done
  [ -z "$tuner" ] || expected+="$tuner"$'\n'
  expected+="LD_LIBRARY_PATH=$LIB_DIR:/usr/local/nvidia/lib64 NCCL_DEBUG=INFO"$'\n'"gpudirect-slurm stand-in"
  seen=$(run_as "$user" srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct="$mode" --container-image="$IMAGE" sh -c "$probe
$(for entry in "$@"; do echo "probe ${entry% *}"; done | sed 's|/run/tcpx-JOB|/run/tcpx-$SLURM_JOB_ID|')
[ -z \"\${NCCL_TUNER_CONFIG_PATH-}\" ] || cat \"\$NCCL_TUNER_CONFIG_PATH\"
echo \"LD_LIBRARY_PATH=\$LD_LIBRARY_PATH NCCL_DEBUG=\$NCCL_DEBUG\"
/bin/net_plugin_user" 2>&1 | sed 's|/run/tcpx-[0-9]*|/run/tcpx-JOB|')
  # Each line twice (both nodes), in any order.
  expect_same "$mode as $user: inside, on both nodes, the mounts (read-only where the profile says), the tuner file, LD_LIBRARY_PATH resolving libnccl-net.so" \
    "$(printf '%s\n%s\n' "$expected" "$expected" | sort)" "$(sort <<<"$seen")"
}

cluster_up a3mega
for user in root nobody; do
  check tcpxo "$user" "tuner: tcpxo" NCCL_IB_HCA=mlx5 "$LIB_DIR ro" "/dev/aperture_devices rw"
  check tcpx "$user" "" NCCL_IB_HCA=mlx5 "$LIB_DIR ro" "/run/tcpx-JOB rw"
done

# The doctor inside the container: this build's gpudirect-launch, run by the host's loader and
# libraries (mounted at /usr) on the image's environment as pyxis gave it to the task.
# Its libraries by their DT_NEEDED names, linked to their real files (some are reached through
# /etc/alternatives or /lib, which the container does not share), all under /usr.
host_libs=$work/host-libs
mkdir -p "$host_libs"
ldd "$LAUNCH" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do ln -sf "$(readlink -f "$path")" "$host_libs/$name"; done
loader=$(readlink -f "$(ldd "$LAUNCH" | awk '$1 ~ /^\/.*ld-linux/ {print $1}')")
outside_usr=$(find "$host_libs" -type l -printf '%l\n' | grep -v '^/usr/' || true)
[ -z "$outside_usr" ] && [[ "$loader" == /usr/* ]] || { echo "the host's loader and libraries are not all under /usr: $loader $outside_usr"; exit 1; }
doctor_mounts=/usr:/usr:ro,$SRC:$SRC:ro,$CLUSTER_DIR/etc:$CLUSTER_DIR/etc:ro,$host_libs:$host_libs:ro
doctor_in_container() {
  (cd "$work" && srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo --container-image="$IMAGE" --container-mounts="$doctor_mounts" \
    "$loader" --library-path "$host_libs" "$LAUNCH" doctor 2>&1)
}
out=$(doctor_in_container)
expect_eq "doctor in a pyxis container with our hook: OK, nothing to warn about" "0 1" "$(grep -c -e WARNING -e MISMATCH <<<"$out") $(grep -c ': OK (mode tcpxo' <<<"$out")"

# Without our hook: the image's NCCL_SOCKET_IFNAME reaches the tasks (pyxis gives an image's own
# values precedence), so the comparison above can fail; the doctor names each variable, both
# values and the fix, and the mounts that are missing.
mv "$hook" "$work/hook.off"
out=$(cd "$work" && srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo --container-image="$IMAGE" sh -c 'echo "$NCCL_SOCKET_IFNAME $NCCL_NET"' 2>&1)
expect_eq "without the hook the image's NCCL_SOCKET_IFNAME and NCCL_NET win" "eth0 Socket" "$out"
out=$(doctor_in_container)
ctrl_nic=$(srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo printenv NCCL_SOCKET_IFNAME 2>&1)
expect_contains "doctor without the hook: the image's NCCL_SOCKET_IFNAME, the mode's, and pyxis's fix" \
  "MISMATCH: in a container (its root is not its slurmstepd's): NCCL_SOCKET_IFNAME is 'eth0' there, but --gpu-direct=tcpxo sets '$ctrl_nic': the image's own value won (pyxis gives variables the image sets precedence over the task's); install gpudirect-slurm's enroot hook on the node (it makes the mode's values win, docs/containers.md), or pass srun --container-env=NCCL_SOCKET_IFNAME" "$out"
expect_contains "... the image's LD_LIBRARY_PATH without the lib dir" \
  "LD_LIBRARY_PATH is '/usr/local/nvidia/lib64' there, but --gpu-direct=tcpxo sets '$LIB_DIR:/usr/local/nvidia/lib64'" "$out"
expect_contains "... NCCL_NET" "NCCL_NET is 'Socket' there, but --gpu-direct=tcpxo sets 'FasTrak'" "$out"
expect_contains "... and the missing lib dir mount" "WARNING: in a container (its root is not its slurmstepd's) without $LIB_DIR (named by" "$out"
printf '%s\n' "$out" >"$work/doctor-without-hook.txt"
mv "$work/hook.off" "$hook"

TOPOLOGY=$SRC/tests/fixtures/local-a3ultra-2cpu.xml
cluster_up a3ultra
for user in root nobody; do
  check gib "$user" "tuner: a3u" NCCL_BUFFSIZE=4194304 "$LIB_DIR ro" "/usr/local/gib/configs ro"
done
summary
