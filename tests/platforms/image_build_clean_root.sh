#!/bin/bash
# The blueprints' image-build step (blueprints/files/install-gpudirect-slurm.sh), run as written in a
# clean Debian 12 root (or another release: --suite bullseye|trixie|...): debootstrap minbase plus
# that release's slurmd and libslurm-dev standing in for the image's Slurm, nothing else. Passes when the script installs its own build dependencies, builds the
# plugin, installs it into Slurm's plugin dir and writes slurmd's plugstack line.
#
# Not part of the CI ctest run (debootstrap takes minutes). Needs root, debootstrap, unshare and the
# Debian archive. The root with Slurm is cached as a tarball (GPUDIRECT_ROOT_CACHE, default
# /var/cache/gpudirect-slurm), so a rerun starts from there.
#
# Usage: tests/platforms/image_build_clean_root.sh [--suite NAME] [--keep] [-- INSTALL_SCRIPT_ARGS...]
#   --suite  Debian release codename (default bookworm)
#   --keep   leave the root (printed at the end) for a look; default: removed
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/platforms/lib_root.sh
source "$repo/tests/platforms/lib_root.sh"  # making (cached) and entering clean roots
suite=bookworm
keep=0
script_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite=${2:?--suite needs a Debian codename}; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; script_args=("$@"); break ;;
    *) echo "image_build_clean_root: error: unknown option '$1' (usage at the top of $0)" >&2; exit 1 ;;
  esac
done

suite=$(root_suite "$suite")

fail() { echo "image_build_clean_root: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, mounts, chroot)"
command -v debootstrap >/dev/null || fail "needs debootstrap (apt-get install debootstrap)"

started=$SECONDS
work=$(mktemp -d /var/tmp/gpudirect-image-root.XXXXXX)
root=$work/root
cleanup() {
  if [ "$keep" = 1 ]; then echo "image_build_clean_root: root kept in $root"; else rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT

# Runs a command inside the root (lib_root.sh: pivot_root into private mount, pid, uts and ipc
# namespaces; the host's network, for apt).
in_root() { root_run "$root" -- "$@"; }

mkdir -p "$root"
cache=$(root_make_tarball "$suite" "$work/debootstrap.log") || fail "no clean $suite root (keep the log with --keep)"
echo "image_build_clean_root: root from $cache"
tar -xzf "$cache" -C "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "image_build_clean_root: root ready after $((SECONDS - started)) s"

# The source as the working tree has it (tracked and untracked, not ignored: no build dirs).
mkdir -p "$root/opt/gpudirect-slurm/src"
git -C "$repo" ls-files -z --cached --others --exclude-standard |
  (cd "$repo" && xargs -0 tar -cf - --no-recursion --ignore-failed-read) | tar -xf - -C "$root/opt/gpudirect-slurm/src"

build_started=$SECONDS
set +e
in_root /opt/gpudirect-slurm/src/blueprints/files/install-gpudirect-slurm.sh --source /opt/gpudirect-slurm/src \
  "${script_args[@]+"${script_args[@]}"}" -- --default off >"$work/install.log" 2>&1
status=$?
set -e
echo "image_build_clean_root: install-gpudirect-slurm.sh exited $status after $((SECONDS - build_started)) s"
if [ "$status" != 0 ]; then
  tail -n 30 "$work/install.log" >&2
  fail "the image-build script failed in a clean $suite root (whole log: $work/install.log with --keep)"
fi

plugin=$root/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_gpudirect.so
[ -f "$plugin" ] || fail "no $plugin after the image-build script"
plugstack=$root/etc/slurm/plugstack.conf.d/gpudirect.conf
grep -qx 'required /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_gpudirect.so default=off' "$plugstack" ||
  fail "$plugstack has no plugstack line 'required .../spank_gpudirect.so default=off': $(cat "$plugstack" 2>&1)"
grep -qE '^[[:space:]]*include[[:space:]]+/etc/slurm/plugstack.conf.d/' "$root/etc/slurm/plugstack.conf" ||
  fail "$root/etc/slurm/plugstack.conf does not include plugstack.conf.d"
# No library search path that root's working directory could feed (an empty or relative RUNPATH
# entry; tests/install/check_search_paths.py), in the plugin dir and gpudirect-launch's.
installed=("$root/usr/lib/x86_64-linux-gnu/slurm-wlm")
[ ! -f "$root/usr/bin/gpudirect-launch" ] || installed+=("$root/usr/bin/gpudirect-launch")
python3 "$repo/tests/install/check_search_paths.py" --installed --expect spank_gpudirect.so "${installed[@]}" >&2 ||
  fail "an installed binary searches an empty, relative or writable directory for libraries (above)"
# Everything the plugin links resolves in the image (libxml2 is loaded on demand, by the soname the
# build read; it must be there too).
missing=$(in_root ldd /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_gpudirect.so | grep 'not found' || true)
[ -z "$missing" ] || fail "the installed plugin links libraries the image lacks: $missing"
soname=$(grep -a -o 'libxml2\.so\.[0-9]*' "$plugin" | head -1)
[ -n "$soname" ] && in_root sh -c "ldconfig -p | grep '$soname ' >/dev/null" || fail "the image has no $soname, which the plugin loads"
echo "image_build_clean_root: PASS in $((SECONDS - started)) s: $plugin and the plugstack line" \
  "'$(grep -v '^#' "$plugstack")' (plugin loads $soname on demand)"
