#!/usr/bin/env bash
# --gpu-direct tasks that run `apptainer exec` on the local cluster (docs/containers.md). Debian
# packages Apptainer in unstable only: where `apptainer` is missing the test says so and exits 77
# (ctest: skipped). It runs in a Debian unstable root with:
#   tests/platforms/release_matrix.sh --releases sid --tests test_apptainer \
#     --extra-packages apptainer,squashfs-tools,busybox-static
# The image is a SIF built here from a busybox root whose Apptainer environment
# (/.singularity.d/env/90-environment.sh) sets NCCL_* and LD_LIBRARY_PATH as NGC images do. Each run
# is `apptainer exec --contain --bind "$(gpudirect-launch doctor --container-mounts=apptainer)"`:
# --contain shares nothing of the host but the binds (no /tmp, a minimal /dev), so what is there
# came through them. As root and as nobody, 2 nodes x 2 tasks, tcpxo:
#   - Apptainer gives the image's values precedence over the task's (no hook can decide): inside,
#     the image's NCCL_SOCKET_IFNAME, NCCL_NET and NCCL_BUFFSIZE replace the plugin's, the rest of
#     CPUs, GPUDIRECT_* and NCCL_* as outside;
#   - the doctor inside names each of them, both values and Apptainer's fix;
#   - with that fix (APPTAINERENV_NAME for every name `doctor --container-env-names` lists, and
#     LD_LIBRARY_PATH) every task's CPUs, GPUDIRECT_* and NCCL_* are those outside;
#   - the lib dir read-only, the device dir writable, LD_LIBRARY_PATH resolving libnccl-net.so.
# As root, apptainer runs with --no-privs: root in the container needs no capabilities, and where
# this runs (a container without CAP_SYS_RESOURCE) apptainer's privileged start fails asking for it.
set -euo pipefail

skip() { echo "SKIPPED: $*"; exit 77; }
command -v apptainer >/dev/null || skip "no apptainer (Debian has it in unstable only; tests/platforms/release_matrix.sh --releases sid --tests test_apptainer --extra-packages apptainer,squashfs-tools,busybox-static runs this test there): Apptainer did not run"
command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools), which apptainer build needs: Apptainer did not run"

# lib.sh's checks go on after a failed one (its own set -uo pipefail, without -e).
set +e
source "$(dirname "$0")/lib.sh"
USER_PROGRAM=$BUILD/tests/net_plugin/net_plugin_user
[ -x "$USER_PROGRAM" ] || { echo "no $USER_PROGRAM: build first"; exit 1; }
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || { echo "no static busybox at /bin/busybox: apt-get install busybox-static"; exit 1; }

work=$CLUSTER_DIR/apptainer
mkdir -p "$work"
chmod 755 "$LIB_DIR"
created=()
cleanup() {
  local path
  for path in ${created[@]+"${created[@]}"}; do rm -rf "$path"; done
  finish
}
trap cleanup EXIT
if [ ! -e /dev/aperture_devices ]; then mkdir -m 1777 /dev/aperture_devices && created+=(/dev/aperture_devices); fi
printf 'tuner: tcpxo\n' >"$LIB_DIR/a3plus_tuner_config.textproto"

# The image: busybox, the program that needs libnccl-net.so (with its C library), and Apptainer's
# environment file as an NGC image's ENV becomes.
root=$work/image
mkdir -p "$root/bin" "$root/etc" "$root/.singularity.d/env"
cp /bin/busybox "$root/bin/busybox"
for applet in sh env cat ls touch echo grep sed sort cut rm; do ln -s busybox "$root/bin/$applet"; done
cp "$USER_PROGRAM" "$root/bin/net_plugin_user"
for lib in $(ldd "$USER_PROGRAM" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
  case "$lib" in */libnccl-net.so) continue ;; esac
  mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
done
printf 'export %s\n' NCCL_SOCKET_IFNAME=eth0 NCCL_NET=Socket NCCL_BUFFSIZE=4194304 NCCL_IB_HCA=mlx5 \
  LD_LIBRARY_PATH=/usr/local/nvidia/lib64 >"$root/.singularity.d/env/90-environment.sh"
IMAGE=$work/busybox-ngc-env.sif
apptainer -s build "$IMAGE" "$root" >"$work/build.log" 2>&1 || { echo "apptainer build failed:"; cat "$work/build.log"; exit 1; }
chmod 644 "$IMAGE"

cluster_up

# The doctor inside: this build's gpudirect-launch by the root's loader, its libraries linked by
# their DT_NEEDED names (some are reached through /etc/alternatives), all under /usr.
host_libs=$work/host-libs
mkdir -p "$host_libs"
ldd "$LAUNCH" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do ln -sf "$(readlink -f "$path")" "$host_libs/$name"; done
loader=$(readlink -f "$(ldd "$LAUNCH" | awk '$1 ~ /^\/.*ld-linux/ {print $1}')")

# The task's side: apptainer exec with the mode's binds (and those the doctor needs); FIX=1 passes
# each variable the mode sets as APPTAINERENV_NAME, the fix the doctor names. Run as the task.
cat >"$work/run.sh" <<EOF
#!/bin/sh
set -eu
binds=\$("$LAUNCH" doctor --container-mounts=apptainer)
extra=""
if [ "\$(id -u)" = 0 ]; then extra=--no-privs; fi
if [ "\${FIX:-0}" = 1 ]; then
  for name in \$("$LAUNCH" doctor --container-env-names) LD_LIBRARY_PATH; do
    eval "value=\\\${\$name-}"
    [ -z "\$value" ] || export "APPTAINERENV_\$name=\$value"
  done
fi
exec apptainer -s exec --contain \$extra --bind "\$binds" \
  --bind /usr:/usr:ro,$SRC:$SRC:ro,$BUILD:$BUILD:ro,$CLUSTER_DIR/etc:$CLUSTER_DIR/etc:ro,$host_libs:$host_libs:ro \
  "$IMAGE" "\$@"
EOF
chmod 755 "$work/run.sh"

report='cpus=$(grep Cpus_allowed_list /proc/self/status | cut -f2); echo "$SLURM_PROCID cpus=$cpus"
env | grep -E "^(GPUDIRECT_|NCCL_)" | grep -vE "^(NCCL_DEBUG|GPUDIRECT_(BUILD_DIR|SOURCE_DIR))=" | sort | sed "s/^/$SLURM_PROCID /"'
probe='probe() { if [ ! -d "$1" ]; then echo "$1 missing"; elif err=$(touch "$1/.probe-$SLURM_PROCID" 2>&1); then rm -f "$1/.probe-$SLURM_PROCID"; echo "$1 rw"; else echo "$1 ro: ${err##*: }"; fi; }'
expect_same() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "$(diff <(printf '%s\n' "$2") <(printf '%s\n' "$3"))"; fi; }
run_as() {
  local user=$1
  shift
  if [ "$user" = root ]; then (cd "$work" && "$@"); else (cd /tmp && runuser -u "$user" -- "$@"); fi
}
srun_args=(-N2 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo)

for user in root nobody; do
  outside=$(run_as "$user" srun "${srun_args[@]}" sh -c "$report" 2>&1 | sort)
  grep -q '^3 GPUDIRECT_MODE=tcpxo$' <<<"$outside" || fail "as $user: 4 tasks ran with --gpu-direct=tcpxo" "$outside"
  # Apptainer's rule: the image's values win; its NCCL_IB_HCA (not the mode's) is simply added.
  image_wins=$({ sed -E 's/^([0-9]+) NCCL_SOCKET_IFNAME=.*/\1 NCCL_SOCKET_IFNAME=eth0/; s/^([0-9]+) NCCL_NET=.*/\1 NCCL_NET=Socket/;
    s/^([0-9]+) NCCL_BUFFSIZE=.*/\1 NCCL_BUFFSIZE=4194304/' <<<"$outside"; for rank in 0 1 2 3; do echo "$rank NCCL_IB_HCA=mlx5"; done; } | sort)
  inside=$(run_as "$user" srun "${srun_args[@]}" "$work/run.sh" sh -c "$report" 2>&1 | grep -v '^WARNING:' | sort)
  expect_same "as $user: apptainer gives the image's NCCL_SOCKET_IFNAME, NCCL_NET, NCCL_BUFFSIZE precedence; the rest as outside" \
    "$image_wins" "$inside"

  out=$(run_as "$user" srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo "$work/run.sh" \
    "$loader" --library-path "$host_libs" "$LAUNCH" doctor 2>&1)
  ctrl_nic=$(sed -n 's/^0 NCCL_SOCKET_IFNAME=//p' <<<"$outside")
  expect_contains "as $user: the doctor inside names the image's NCCL_SOCKET_IFNAME, the mode's, and Apptainer's fix" \
    "MISMATCH: in a container (its root is not its slurmstepd's): NCCL_SOCKET_IFNAME is 'eth0' there, but --gpu-direct=tcpxo sets '$ctrl_nic': the image's own value won (Apptainer gives the image's environment precedence over the host's); pass apptainer exec --env NCCL_SOCKET_IFNAME='$ctrl_nic' (or export APPTAINERENV_NCCL_SOCKET_IFNAME before it)" "$out"
  expect_contains "as $user: ... NCCL_NET" "NCCL_NET is 'Socket' there, but --gpu-direct=tcpxo sets 'FasTrak'" "$out"
  expect_contains "as $user: ... LD_LIBRARY_PATH without the lib dir" \
    "LD_LIBRARY_PATH is '/usr/local/nvidia/lib64:/.singularity.d/libs' there, but --gpu-direct=tcpxo sets '$LIB_DIR:/usr/local/nvidia/lib64:/.singularity.d/libs'" "$out"

  inside=$(run_as "$user" env FIX=1 srun "${srun_args[@]}" "$work/run.sh" sh -c "$report" 2>&1 | grep -v '^WARNING:' | sort)
  expect_same "as $user: with APPTAINERENV_ for the mode's names every task's CPUs, GPUDIRECT_* and NCCL_* are those outside (and the image's NCCL_IB_HCA)" \
    "$({ printf '%s\n' "$outside"; for rank in 0 1 2 3; do echo "$rank NCCL_IB_HCA=mlx5"; done; } | sort)" "$inside"
  out=$(run_as "$user" env FIX=1 srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo "$work/run.sh" \
    "$loader" --library-path "$host_libs" "$LAUNCH" doctor 2>&1)
  expect_eq "as $user: ... and the doctor inside finds nothing to say" "0 1" "$(grep -c -e WARNING: -e MISMATCH <<<"$out") $(grep -c ': OK (mode tcpxo' <<<"$out")"

  seen=$(run_as "$user" env FIX=1 srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo "$work/run.sh" sh -c "$probe
probe $LIB_DIR; probe /dev/aperture_devices; cat $LIB_DIR/a3plus_tuner_config.textproto
echo \"LD_LIBRARY_PATH=\${LD_LIBRARY_PATH%%:*}\"; /bin/net_plugin_user" 2>&1 | grep -v '^WARNING:' | sort)
  one="$LIB_DIR ro: Read-only file system
/dev/aperture_devices rw
tuner: tcpxo
LD_LIBRARY_PATH=$LIB_DIR
gpudirect-slurm stand-in"
  expect_same "as $user: inside, on both nodes, the lib dir read-only, the device dir writable, LD_LIBRARY_PATH resolving libnccl-net.so" \
    "$(printf '%s\n%s\n' "$one" "$one" | sort)" "$seen"
done
summary
