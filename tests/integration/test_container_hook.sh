#!/usr/bin/env bash
# Containers see the GPUDirect stack (docs/containers.md). enroot and pyxis are not Debian packages,
# so this test plays enroot's part as its sources describe it (enroot doc/configuration.md,
# src/runtime.sh, bin/enroot-mount.c, bin/enroot-switchroot.c; pyxis pyxis_slurmstepd.c):
#   - the hook's environment is a real --gpu-direct task's, less what pyxis keeps from enroot
#     (PATH, LD_LIBRARY_PATH, LD_PRELOAD, SLURM_PROCID, SLURM_LOCALID ...), plus ENROOT_ROOTFS,
#     ENROOT_ENVIRON (the image's environment) and ENROOT_MOUNTS (empty);
#   - in a private mount namespace (unshare -m) with the mode's host paths faked, the hook runs,
#     its fstab lines are mounted into a busybox root file system as enroot-mount does (bind or
#     rbind, then a read-only remount for ro; x-create=auto makes the mount point), and a command
#     runs there under chroot with exactly ENROOT_ENVIRON as its environment (enroot-switchroot
#     clears the environment and loads that file).
# Inside, the profile's libraries, tuner files, device and socket dirs must be where the task's
# environment says, read-only where the profile says, and a program that needs libnccl-net.so must
# start through LD_LIBRARY_PATH. Also: the hook is inert without GPUDIRECT_MODE, names missing host
# paths, stops on a mode it cannot work out; `doctor --container-mounts` follows pyxis's syntax;
# the doctor inside a task warns about a container's missing mounts.
source "$(dirname "$0")/lib.sh"

USER_PROGRAM=$BUILD/tests/net_plugin/net_plugin_user
[ -x "$USER_PROGRAM" ] || { echo "no $USER_PROGRAM: build first"; exit 1; }
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
  { echo "no static busybox at $BUSYBOX: apt-get install busybox-static (scripts/install-deps.sh)"; exit 1; }

work=$CLUSTER_DIR/containers
mkdir -p "$work"
# The hook as an installer writes it for this build (install-node.sh --prefix rewrites this line).
hook=$work/50-gpudirect.sh
sed "s|^launch=/usr/bin/gpudirect-launch\$|launch=$LAUNCH|" "$SRC/scripts/enroot/hooks.d/50-gpudirect.sh" >"$hook"
chmod 755 "$hook"
grep -qxF "launch=$LAUNCH" "$hook" || { echo "the hook has no launch= line to point at $LAUNCH"; exit 1; }

# The mode's host files: lib.sh's lib dir (lib_dir= of the cluster's plugstack line, every mode)
# holds the stand-in libnccl-net.so; the profiles' tuner and guest config files beside it.
printf 'tuner: tcpxo\n' >"$LIB_DIR/a3plus_tuner_config.textproto"
printf 'guest: tcpxo\n' >"$LIB_DIR/a3plus_guest_config.textproto"

cluster_up

# A task's environment as pyxis hands it to enroot: the job's, without what pyxis denies it.
task_env=$work/task.env
env -u LD_LIBRARY_PATH srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo env >"$task_env" 2>&1
grep -q '^GPUDIRECT_MODE=tcpxo$' "$task_env" || { fail "a --gpu-direct=tcpxo task's environment" "$(cat "$task_env")"; summary; exit 1; }
JOB_ID=$(sed -n 's/^SLURM_JOB_ID=//p' "$task_env")
mapfile -t hook_base_env < <(grep -vE '^(PATH|LD_LIBRARY_PATH|LD_PRELOAD|SLURM_PROCID|SLURM_LOCALID|SLURM_TASK_PID|PMIX_RANK|PMI_FD|ENROOT_[A-Z_]*|GPUDIRECT_MODE)=' "$task_env" |
  grep -E '^[A-Za-z_][A-Za-z0-9_]*=')
hook_base_env+=(PATH=/usr/sbin:/usr/bin:/sbin:/bin)

# A busybox root file system: what an image gives, plus the program that needs libnccl-net.so.
make_rootfs() {
  local root=$1 lib applet
  mkdir -p "$root/bin" "$root/etc" "$root/tmp"
  cp "$BUSYBOX" "$root/bin/busybox"
  for applet in sh env cat ls touch echo; do ln -s busybox "$root/bin/$applet"; done
  cp "$USER_PROGRAM" "$root/bin/net_plugin_user"
  # Its C library and loader, at the paths it was linked with; libnccl-net.so must come from a mount.
  for lib in $(ldd "$USER_PROGRAM" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  printf '# enroot-provenance: docker://busybox\nexec "$@"\n' >"$root/etc/rc"
}

# enroot start, played in a private mount namespace: fake host paths, the hook, its mounts, chroot.
cat >"$work/enroot-start.sh" <<'EOF'
set -euo pipefail
rootfs=$1 hook=$2 hook_env=$3 job=$4
shift 4

# Host paths the profiles name outside the lib dir, on tmpfs over /dev, /run and /usr/local (this
# namespace only). /dev keeps the nodes bash needs.
fake=$rootfs.dev
mkdir -p "$fake"
mount -t tmpfs tmpfs "$fake"
for node in null zero urandom; do touch "$fake/$node"; mount --bind "/dev/$node" "$fake/$node"; done
ln -s /proc/self/fd "$fake/fd"
mkdir "$fake/aperture_devices" && touch "$fake/aperture_devices/llcm0"
mount --rbind "$fake" /dev
mount -t tmpfs tmpfs /run && mkdir "/run/tcpx-$job"
# /usr/local keeps what the host has there (a CUDA build of gpudirect-launch finds NCCL in
# /usr/local/cuda), with gib's configs added.
keep=$rootfs.usr-local
mkdir -p "$keep" && mount --bind /usr/local "$keep"
mount -t tmpfs tmpfs /usr/local
for entry in "$keep"/*; do
  [ -e "$entry" ] || [ -L "$entry" ] || continue
  name=${entry##*/}
  if [ -L "$entry" ]; then ln -s "$(readlink "$entry")" "/usr/local/$name"
  elif [ -d "$entry" ]; then mkdir "/usr/local/$name" && mount --rbind "$entry" "/usr/local/$name"
  else touch "/usr/local/$name" && mount --bind "$entry" "/usr/local/$name"; fi
done
mkdir -p /usr/local/gib/configs && printf 'tuner: a4\n' >/usr/local/gib/configs/tuner_config_a4.txtpb

# enroot's runtime::_do_hooks: an empty fstab for the hooks, the container's environment file.
export ENROOT_ROOTFS=$rootfs ENROOT_MOUNTS=$rootfs.fstab ENROOT_ENVIRON=$rootfs.environ ENROOT_PID=$$
: >"$ENROOT_MOUNTS"
mapfile -t env_lines <"$hook_env"
env -i "${env_lines[@]}" ENROOT_ROOTFS="$ENROOT_ROOTFS" ENROOT_MOUNTS="$ENROOT_MOUNTS" ENROOT_ENVIRON="$ENROOT_ENVIRON" \
  ENROOT_PID="$ENROOT_PID" "$hook" >"$rootfs.hook-stdout" 2>"$rootfs.hook-stderr" || { cat "$rootfs.hook-stderr"; exit 3; }

# enroot-mount --root ROOTFS FSTAB, for the entries a hook may write (pass 0, type none).
while read -r source target type options rest; do
  case "$source" in "" | \#*) continue ;; esac
  [ "$type" = none ] && [ -z "$rest" ] || { echo "unexpected fstab entry: $source $target $type $options $rest"; exit 4; }
  bind=--bind read_only=0 create=""
  IFS=, read -ra flags <<<"$options"
  for flag in "${flags[@]}"; do
    case "$flag" in
      x-create=auto) create=auto ;;
      rbind) bind=--rbind ;;
      bind) bind=--bind ;;
      ro) read_only=1 ;;
      rw) read_only=0 ;;
      *) echo "mount option enroot-mount would take but this test does not: $flag"; exit 4 ;;
    esac
  done
  if [ "$create" = auto ]; then
    if [ -d "$source" ]; then mkdir -p "$rootfs$target"; else mkdir -p "$(dirname "$rootfs$target")"; touch "$rootfs$target"; fi
  fi
  mount "$bind" "$source" "$rootfs$target"
  [ "$read_only" = 0 ] || mount -o remount,bind,ro "$rootfs$target"
done <"$ENROOT_MOUNTS"

# enroot-switchroot --envfile: the command sees exactly the container's environment file.
mapfile -t container_env < <(grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$ENROOT_ENVIRON")
exec chroot "$rootfs" /bin/env -i "${container_env[@]}" "$@"
EOF

# start MODE NAME [CHECK-SCRIPT]: a container NAME for a task of MODE; prints what CHECK-SCRIPT
# prints inside it (busybox sh).
start() {
  local mode=$1 name=$2 script=${3:-true}
  local root=$work/$name
  make_rootfs "$root"
  printf 'PATH=/bin\nLD_LIBRARY_PATH=/opt/image/lib\n' >"$root.environ"  # the image's own
  printf '%s\n' "${hook_base_env[@]}" "GPUDIRECT_MODE=$mode" >"$root.hook-env"
  unshare -m --propagation private bash "$work/enroot-start.sh" "$root" "$hook" "$root.hook-env" "$JOB_ID" /bin/sh -c "$script" 2>&1
}

# What a check script prints about PATH: missing, or whether it takes writes (and why not). The
# root file system has no /dev of its own, as under ENROOT_RESTRICT_DEV: only the hook's mounts
# bring host paths in.
probe='probe() { if [ ! -e "$1" ]; then echo "$1 missing"; elif err=$(touch "$1/.probe" 2>&1); then echo "$1 rw"; else echo "$1 ro: ${err##*: }"; fi; }'

# --- tcpxo: the plugin dir read-only, the LLCM device dir writable, LD_LIBRARY_PATH resolving ----
out=$(start tcpxo tcpxo "$probe
probe $LIB_DIR; probe /dev/aperture_devices
ls $LIB_DIR/libnccl-net.so
cat $LIB_DIR/a3plus_tuner_config.textproto $LIB_DIR/a3plus_guest_config.textproto
ls /dev/aperture_devices/llcm0
echo LD_LIBRARY_PATH=\$LD_LIBRARY_PATH
/bin/net_plugin_user")
expect_eq "tcpxo: the container sees the plugin dir read-only, the device dir writable, LD_LIBRARY_PATH resolves libnccl-net.so" \
  "$LIB_DIR ro: Read-only file system
/dev/aperture_devices rw
$LIB_DIR/libnccl-net.so
tuner: tcpxo
guest: tcpxo
/dev/aperture_devices/llcm0
LD_LIBRARY_PATH=$LIB_DIR:/opt/image/lib
gpudirect-slurm stand-in" "$out"
expect_eq "tcpxo: the hook wrote the profile's mounts in enroot's fstab form" \
  "$LIB_DIR $LIB_DIR none x-create=auto,rbind,ro
/dev/aperture_devices /dev/aperture_devices none x-create=auto,rbind" "$(cat "$work/tcpxo.fstab")"
expect_eq "tcpxo: the hook prints nothing (enroot drops a hook's stdout; its messages go to stderr)" "" \
  "$(cat "$work/tcpxo.hook-stdout" "$work/tcpxo.hook-stderr")"
expect_eq "tcpxo: the mounts stayed in the container's namespace" "" "$(grep -F "$work" /proc/self/mountinfo)"

# The same program without the hook's LD_LIBRARY_PATH: only the mounts and the image's value.
out=$(start tcpxo no-library-path "LD_LIBRARY_PATH=/opt/image/lib /bin/net_plugin_user")
expect_contains "... and without the plugin dir in LD_LIBRARY_PATH the program cannot start (the check can fail)" \
  "libnccl-net.so: cannot open shared object file" "$out"

# --- tcpx: RxDM's socket dir (per job) writable; gib: the tuner configs read-only -------------------
out=$(start tcpx tcpx "$probe
probe $LIB_DIR; probe /run/tcpx-$JOB_ID; /bin/net_plugin_user")
expect_eq "tcpx: the plugin dir read-only, /run/tcpx-JOB writable, libnccl-net.so found" "$LIB_DIR ro: Read-only file system
/run/tcpx-$JOB_ID rw
gpudirect-slurm stand-in" "$out"
out=$(start gib gib "$probe
probe $LIB_DIR; probe /usr/local/gib/configs; cat /usr/local/gib/configs/tuner_config_a4.txtpb; /bin/net_plugin_user")
expect_eq "gib: the plugin dir and the tuner configs read-only, libnccl-net.so found" "$LIB_DIR ro: Read-only file system
/usr/local/gib/configs ro: Read-only file system
tuner: a4
gpudirect-slurm stand-in" "$out"
out=$(start rdma rdma "ls /opt 2>&1; echo LD_LIBRARY_PATH=\$LD_LIBRARY_PATH")
expect_eq "rdma: nothing to mount, the image's environment untouched" "ls: /opt: No such file or directory
LD_LIBRARY_PATH=/opt/image/lib" "$out"
expect_eq "rdma: an empty fstab" "" "$(cat "$work/rdma.fstab")"

# --- the hook on its own, as enroot calls it, without a namespace ----------------------------------
# run_hook NAME IMAGE-ENVIRONMENT VAR=VALUE...: runs the hook with the task's environment and the
# given variables; sets rc, out (stdout+stderr), mounts and environ (the files after it).
run_hook() {
  local name=$1 image=$2
  shift 2
  local root=$work/$name
  mkdir -p "$root"
  : >"$root.fstab"
  printf '%s' "$image" >"$root.environ"
  out=$(env -i "${hook_base_env[@]}" ENROOT_ROOTFS="$root" ENROOT_MOUNTS="$root.fstab" ENROOT_ENVIRON="$root.environ" \
    ENROOT_PID=$$ "$@" "$hook" 2>&1)
  rc=$?
  mounts=$(cat "$root.fstab")
  environ=$(cat "$root.environ")
}
image_env=$'PATH=/bin\nLD_LIBRARY_PATH=/opt/image/lib\n'

run_hook inert "$image_env"
expect_eq "no GPUDIRECT_MODE: the hook exits 0, says nothing, writes nothing" "0|||$image_env" "$rc|$out|$mounts|$environ"$'\n'
run_hook inert-off "$image_env" GPUDIRECT_MODE=off
expect_eq "GPUDIRECT_MODE=off: the same" "0|||$image_env" "$rc|$out|$mounts|$environ"$'\n'

# enroot start -e GPUDIRECT_MODE=tcpx (no Slurm): the mode from the container's environment file.
run_hook environ-mode "GPUDIRECT_MODE=tcpx"$'\n' SLURM_JOB_ID=88
expect_eq "the mode from ENROOT_ENVIRON when the environment has none (enroot start -e)" \
  "0|$LIB_DIR $LIB_DIR none x-create=auto,rbind,ro|GPUDIRECT_MODE=tcpx
LD_LIBRARY_PATH=$LIB_DIR" "$rc|$(head -1 <<<"$mounts")|$environ"

if [ ! -e /dev/aperture_devices ]; then
  run_hook missing-device "$image_env" GPUDIRECT_MODE=tcpxo
  expect_eq "a host path that is missing: left out, the container still starts" "0|$LIB_DIR $LIB_DIR none x-create=auto,rbind,ro" "$rc|$mounts"
  expect_contains "... with a message naming it" "gpudirect enroot hook: /dev/aperture_devices is missing on" "$out"
  expect_contains "... and the fix" "come with the RxDM prolog); 'gpudirect-launch doctor --mode tcpxo --container-mounts' lists" "$out"
fi

run_hook no-job "$image_env" GPUDIRECT_MODE=tcpx SLURM_JOB_ID=
expect_eq "tcpx without a job id: the container does not start (exit 1)" "1" "$rc"
expect_contains "... the doctor names the cause" '${SLURM_JOB_ID} is empty here' "$out"
expect_contains "... and the hook what it could not do" "gpudirect enroot hook: cannot work out what --gpu-direct=tcpx needs" "$out"
run_hook bad-mode "$image_env" GPUDIRECT_MODE=tcpxx
expect_eq "an unknown mode: exit 1, nothing mounted" "1|" "$rc|$mounts"
expect_contains "... naming it" "tcpxx not in" "$out"
sed 's|^launch=.*|launch=/nonexistent/gpudirect-launch|' "$hook" >"$work/hook-no-launcher.sh" && chmod 755 "$work/hook-no-launcher.sh"
out=$(env -i "${hook_base_env[@]}" GPUDIRECT_MODE=tcpxo ENROOT_ROOTFS="$work" ENROOT_MOUNTS="$work/x.fstab" \
  ENROOT_ENVIRON="$work/x.environ" "$work/hook-no-launcher.sh" 2>&1)
expect_eq "gpudirect-launch missing: exit 1 with the fix" \
  "1 gpudirect enroot hook: /nonexistent/gpudirect-launch is missing: reinstall gpudirect-slurm on this node (the hook asks gpudirect-launch what --gpu-direct=tcpxo needs)" \
  "$? $out"

# --- the image's own values against the mode's ------------------------------------------------------
# As NGC images have it: their own NCCL_SOCKET_IFNAME, NCCL_* tuning and LD_LIBRARY_PATH. pyxis gives
# a task the container's value of every name the container's environment has
# (pyxis_slurmstepd.c, spank_import_container_env): the hook takes out the lines of the names the
# mode sets, so each task keeps the plugin's own; the profile's ?= (NCCL_DEBUG) and names it does not
# set stay the image's.
ngc_env=$'PATH=/bin\nLD_LIBRARY_PATH=/usr/local/nvidia/lib64\nNCCL_SOCKET_IFNAME=eth0\nNCCL_NET=Socket\nNCCL_BUFFSIZE=4194304\nNCCL_DEBUG=INFO\nNCCL_IB_DISABLE=1\n'
run_hook image-values "$ngc_env" GPUDIRECT_MODE=tcpxo
expect_eq "an image's NCCL_NET, NCCL_SOCKET_IFNAME, NCCL_BUFFSIZE: out of the container's environment; its NCCL_DEBUG and NCCL_IB_DISABLE stay" \
  "0|PATH=/bin
LD_LIBRARY_PATH=/usr/local/nvidia/lib64
NCCL_DEBUG=INFO
NCCL_IB_DISABLE=1
LD_LIBRARY_PATH=$LIB_DIR:/usr/local/nvidia/lib64" "$rc|$environ"
expect_contains "... saying so in enroot's log" \
  "gpudirect enroot hook: the image's own NCCL_NET NCCL_SOCKET_IFNAME NCCL_BUFFSIZE left out of the container: --gpu-direct=tcpxo sets them" "$out"
# What pyxis then gives the task: its own environment, overwritten by the container's.
task_after=$(cat "$task_env" - <<<"$environ" | grep -E '^NCCL_(NET|SOCKET_IFNAME|BUFFSIZE|DEBUG)=' | sort -t= -k1,1 -s |
  awk -F= '{last[$1] = $0} END {for (n in last) print last[n]}' | sort)
expect_eq "... so the task keeps the plugin's values of them" \
  "$(grep -E '^NCCL_(NET|SOCKET_IFNAME|BUFFSIZE)=' "$task_env" | sort)
NCCL_DEBUG=INFO" "$(grep -v '^NCCL_DEBUG=' <<<"$task_after")
$(grep '^NCCL_DEBUG=' <<<"$task_after")"
run_hook image-values-rdma "$ngc_env" GPUDIRECT_MODE=rdma
expect_eq "rdma sets none of them: the image's environment untouched" "0|$ngc_env" "$rc|$environ"$'\n'

# --- doctor --container-mounts: pyxis's SRC:DST[:FLAGS],... and the same mounts as the fstab ---------
# pyxis (args.c): entries split at ',', fields at ':', SRC and DST absolute (or relative) paths,
# FLAGS joined by '+'; its fstab line is "SRC DST x-create=auto,rbind,FLAGS" (enroot-mount reads
# the third field as options when it looks like them).
for mode in tcpxo tcpx gib; do
  value=$(SLURM_JOB_ID=$JOB_ID "$LAUNCH" doctor --mode "$mode" --container-mounts 2>&1)
  fstab=$(SLURM_JOB_ID=$JOB_ID "$LAUNCH" doctor --mode "$mode" --container-mounts=fstab 2>&1)
  bad=$(tr ',' '\n' <<<"$value" | grep -vxE '/[^,:[:space:]]+:/[^,:[:space:]]+(:[a-z]+(\+[a-z]+)*)?' || true)
  expect_eq "$mode: doctor --container-mounts is comma-separated SRC:DST[:FLAGS] with absolute paths" "" "$bad"
  as_pyxis_writes=$(tr ',' '\n' <<<"$value" | awk -F: '{flags = "x-create=auto,rbind"; if ($3 != "") {f = $3; gsub(/\+/, ",", f); flags = flags "," f}; print $1, $2, "none", flags}')
  expect_eq "$mode: ... the mounts pyxis makes of it are the hook's fstab lines" "$fstab" "$as_pyxis_writes"
done
expect_eq "tcpxo: doctor --container-mounts" "$LIB_DIR:$LIB_DIR:ro,/dev/aperture_devices:/dev/aperture_devices" \
  "$("$LAUNCH" doctor --mode tcpxo --container-mounts 2>&1)"
out=$("$LAUNCH" doctor --mode rdma --container-mounts 2>/dev/null)
expect_eq "rdma: an empty stdout (nothing to mount)" "" "$out"
out=$("$LAUNCH" doctor --mode tcpxo --container-mounts=docker 2>&1)
expect_eq "an unknown output form: exit 6, naming the forms" "6 yes" "$? $(grep -q 'docker not in {pyxis,apptainer,fstab}' <<<"$out" && echo yes)"
expect_eq "tcpxo: doctor --container-mounts=apptainer, apptainer's --bind value (pyxis's form)" \
  "$LIB_DIR:$LIB_DIR:ro,/dev/aperture_devices:/dev/aperture_devices" "$("$LAUNCH" doctor --mode tcpxo --container-mounts=apptainer 2>&1)"
out=$("$LAUNCH" doctor --mode rdma --container-mounts=apptainer 2>&1 >/dev/null)
expect_eq "rdma, apptainer form: stdout empty, the reason on stderr" "gpudirect doctor: mode rdma needs no container mounts" "$out"
out=$(GPUDIRECT_MODE=sockets "$LAUNCH" doctor --container-mounts 2>&1)
expect_eq "a bad GPUDIRECT_MODE: exit 1, naming it" "1 yes" "$? $(grep -q "gpudirect doctor: GPUDIRECT_MODE: invalid --gpu-direct value 'sockets'" <<<"$out" && echo yes)"
printf 'required %s profile.tcpxo=nowhere profile_dir=%s\n' "$PLUGIN" "$work/none" >"$work/plugstack-nowhere.conf"
out=$("$LAUNCH" doctor --mode tcpxo --plugstack "$work/plugstack-nowhere.conf" --container-mounts 2>&1)
expect_eq "no profile: exit 1, naming where it looked" "1 yes" \
  "$? $(grep -qF "gpudirect doctor: network profile 'nowhere' not found (looked in $work/none/nowhere.conf" <<<"$out" && echo yes)"

# --- the doctor inside a task in a container: missing mounts named, with the fix ---------------------
container=$work/in-task
mkdir -p "$container"  # a root of its own: no marker file needed
out=$(GPUDIRECT_TEST_CONTAINER_ROOT=$container srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" doctor 2>&1)
expect_contains "doctor in a container without the plugin dir: a warning naming it and the variables" \
  "WARNING: in a container (its root is not its slurmstepd's) without $LIB_DIR (named by LD_LIBRARY_PATH, NCCL_LIB_DIR, NCCL_TUNER_CONFIG_PATH, NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE): mount it, e.g. srun --container-mounts=$LIB_DIR:$LIB_DIR:ro," "$out"
expect_contains "... and the device dir" "without /dev/aperture_devices (named by NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY): mount it, e.g. srun --container-mounts=/dev/aperture_devices:/dev/aperture_devices," "$out"
mkdir -p "$container$LIB_DIR" "$container/dev/aperture_devices"
out=$(GPUDIRECT_TEST_CONTAINER_ROOT=$container srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" doctor 2>&1)
expect_eq "doctor in a container with both mounts: no warning, OK" "0 yes" \
  "$(grep -c WARNING <<<"$out") $(grep -q ': OK (mode tcpxo' <<<"$out" && echo yes)"
# The task's root is its slurmstepd's: no container, even where the host is one (/.dockerenv when
# this machine runs in Docker), though /dev/aperture_devices is missing here.
out=$(srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" doctor 2>&1)
expect_eq "doctor outside a container (host marker: $(ls /.dockerenv 2>/dev/null || echo none)): no warning" "0" "$(grep -c WARNING <<<"$out")"

# --- the doctor inside a container: the image's values, what did not arrive, the plugin's glibc -----
# An Apptainer container (its /.singularity.d) with the mounts, whose image set NCCL_SOCKET_IFNAME and
# NCCL_BUFFSIZE, and that passed no NCCL_NET (apptainer --cleanenv).
apptainer_root=$work/apptainer-root
mkdir -p "$apptainer_root/.singularity.d" "$apptainer_root$LIB_DIR" "$apptainer_root/dev/aperture_devices"
ctrl_nic=$(sed -n 's/^NCCL_SOCKET_IFNAME=//p' "$task_env")
out=$(GPUDIRECT_TEST_CONTAINER_ROOT=$apptainer_root srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo \
  bash -c "NCCL_SOCKET_IFNAME=eth0 NCCL_BUFFSIZE=4194304 exec env -u NCCL_NET $LAUNCH doctor" 2>&1)
expect_eq "doctor in a container whose image's values won: exit 1, three mismatches" "1 3" "$? $(grep -c MISMATCH <<<"$out")"
expect_contains "... the image's value, the mode's, and Apptainer's fix" \
  "MISMATCH: in a container (its root is not its slurmstepd's): NCCL_SOCKET_IFNAME is 'eth0' there, but --gpu-direct=tcpxo sets '$ctrl_nic': the image's own value won (Apptainer gives the image's environment precedence over the host's); pass apptainer exec --env NCCL_SOCKET_IFNAME='$ctrl_nic'" "$out"
expect_contains "... a variable that did not arrive" \
  "MISMATCH: in a container (its root is not its slurmstepd's): NCCL_NET, which --gpu-direct=tcpxo sets to 'FasTrak', did not arrive in it: Apptainer passed no host value" "$out"
# The net plugin built for a newer glibc (the stand-in needs GLIBC_9.99) first in LD_LIBRARY_PATH.
glibc_standin=$BUILD/tests/net_plugin/needs_new_glibc
out=$(GPUDIRECT_TEST_CONTAINER_ROOT=$apptainer_root srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo \
  bash -c "LD_LIBRARY_PATH=$glibc_standin exec $LAUNCH doctor" 2>&1)
expect_contains "doctor: a net plugin that needs a newer glibc than the container's, both named, and the fix" \
  "MISMATCH: the NCCL net plugin $glibc_standin/libnccl-net.so needs GLIBC_9.99 (from libc.so.6, its ELF version needs), but the container's glibc is $(getconf GNU_LIBC_VERSION | awk '{print $2}'): the loader refuses the plugin" "$out"

summary
