#!/usr/bin/env bash
# gpudirect-slurm's enroot hook, installed as /etc/enroot/hooks.d/50-gpudirect.sh: a container of
# a `--gpu-direct=MODE` task (pyxis: srun --gpu-direct=tcpxo --container-image=...) sees the host
# paths its environment names (the NCCL plugin dir, device and socket dirs: the `mount` lines of the
# mode's profile, docs/containers.md), and finds the plugin dir first in LD_LIBRARY_PATH.
#
# enroot's contract (doc/configuration.md, src/runtime.sh): before the container switches to its
# root, enroot runs every executable hooks.d/*.sh with the host's environment (under pyxis: the
# task's, where the plugin put GPUDIRECT_MODE) plus ENROOT_ROOTFS (the container's root),
# ENROOT_ENVIRON (the container's environment file: it is all the container's environment, the
# last line of a name wins) and ENROOT_MOUNTS (an fstab, empty when the hooks start, that enroot
# mounts after them; DST lies inside the rootfs). Hooks run as the container's user, with full
# capabilities in its user and mount namespaces, on the host's file system. Their stdout is
# discarded, their stderr is enroot's log, and a non-zero exit stops the container.
#
# Without GPUDIRECT_MODE (in the environment, else in ENROOT_ENVIRON), or with mode off, it does
# nothing. A host path that is missing is left out with a message naming it (a single-node TCPX
# job has no RxDM socket dir); a mode whose mounts cannot be worked out stops the container.
set -euo pipefail

# Set by the installer to PREFIX/bin/gpudirect-launch (scripts/install-node.sh --prefix).
launch=/usr/bin/gpudirect-launch

say() { printf 'gpudirect enroot hook: %s\n' "$*" >&2; }

# The container's value of NAME: the last NAME= line of its environment file ("" if none).
container_env() { sed -n "s/^$1=//p" "$ENROOT_ENVIRON" | tail -n 1; }

mode=${GPUDIRECT_MODE-}
if [ -z "$mode" ] && [ -f "${ENROOT_ENVIRON-}" ]; then mode=$(container_env GPUDIRECT_MODE); fi
case "$mode" in "" | off) exit 0 ;; esac

for name in ENROOT_ROOTFS ENROOT_ENVIRON ENROOT_MOUNTS; do
  [ -n "${!name-}" ] || { say "$name is not set: this hook runs under enroot start (installed in enroot's hooks.d)"; exit 1; }
done
if [ ! -x "$launch" ]; then
  say "$launch is missing: reinstall gpudirect-slurm on this node (the hook asks gpudirect-launch what --gpu-direct=$mode needs)"
  exit 1
fi

# The mode's mounts, library path and the names it sets, from its profile and this node's plugstack line.
if ! fstab=$("$launch" doctor --mode "$mode" --container-mounts=fstab) ||
  ! library_path=$("$launch" doctor --mode "$mode" --container-library-path) ||
  ! set_names=$("$launch" doctor --mode "$mode" --container-env-names); then
  say "cannot work out what --gpu-direct=$mode needs in the container (gpudirect-launch doctor says why, above): not starting it without the GPUDirect stack"
  exit 1
fi

while read -r source destination rest; do
  [ -n "$source" ] || continue
  if [ ! -e "$source" ]; then
    say "$source is missing on ${HOSTNAME:-this node}, so the container gets no $destination, which --gpu-direct=$mode names:" \
      "install it on the node (the NCCL plugin dir is lib_dir= in plugstack.conf; /dev/aperture_devices and /run/tcpx-JOB" \
      "come with the RxDM prolog); 'gpudirect-launch doctor --mode $mode --container-mounts' lists what the mode needs"
    continue
  fi
  printf '%s %s %s\n' "$source" "$destination" "$rest" >>"$ENROOT_MOUNTS"
done <<<"$fstab"

# The mode's values win over the image's own (NGC images set NCCL_SOCKET_IFNAME, NCCL_* tuning):
# pyxis gives each task the container's value of every name the container's environment has, in
# place of the task's (pyxis_slurmstepd.c, spank_import_container_env), and a name it lacks keeps
# the task's own, which differs between tasks (NICs). So take the image's lines out for each name
# the mode sets and this task has (a profile line whose condition failed set nothing: the image's
# value stays), rewriting the file in place as hooks may (enroot formats it again after them).
drop=()
while read -r name; do
  if [ -n "$name" ] && [ -n "${!name+set}" ] && grep -q "^$name=" "$ENROOT_ENVIRON"; then drop+=("$name"); fi
done <<<"$set_names"
if [ "${#drop[@]}" -gt 0 ]; then
  kept=$(grep -vE "^($(IFS='|'; echo "${drop[*]}"))=" "$ENROOT_ENVIRON" || true)
  printf '%s\n' "$kept" | sed '/^$/d' >"$ENROOT_ENVIRON"
  say "the image's own ${drop[*]} left out of the container: --gpu-direct=$mode sets them (each task keeps the plugin's values)"
fi

# The container's environment is its image's (pyxis then gives it to the task, replacing the
# plugin's LD_LIBRARY_PATH): put the plugin dir in front of the image's value.
if [ -n "$library_path" ]; then
  current=$(container_env LD_LIBRARY_PATH)
  case "$current" in
    "$library_path" | "$library_path":*) ;;
    *) printf 'LD_LIBRARY_PATH=%s\n' "$library_path${current:+:$current}" >>"$ENROOT_ENVIRON" ;;
  esac
fi
exit 0
