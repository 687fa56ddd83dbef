#!/bin/bash
# README's set-up, as written, on a fresh Debian machine: a clean root made with debootstrap
# (minbase: nothing of ours, no Slurm, no compiler), this checkout copied in (git archive of HEAD),
# and README's two commands run in it as root:
#   scripts/local-cluster.sh demo    the main job on the real local Slurm cluster
#   scripts/run-tests.sh             every test (what CI runs)
# Both commands install their packages with scripts/install-deps.sh, which needs the archive; the
# local cluster must not meet the host's (CI may run its own). So install-deps.sh runs first on its
# own with the host's network, and the two commands then run in a network namespace of their own,
# where their install-deps.sh finds everything present. They run as a user runs them: one after the
# other in ONE shell, so the demo's cluster (which stays up) is still up while the tests start their
# clusters beside it. run-tests.sh's Debian 11 stage (a nested root made with debootstrap) needs the
# archive too: it is left out here (GPUDIRECT_OTHER_RELEASES=); CI runs it on the host.
#
# Not part of CI (a full CI run per release). Needs root, debootstrap, unshare, pivot_root and the
# Debian archive.
#
# Usage: tests/platforms/readme_commands.sh [--suite NAME]... [--keep]
#   --suite  Debian release codename, repeatable (default: bookworm and trixie, Debian 12 and 13)
#   --keep   keep each root (printed at the end) for a look; default: removed, logs kept
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/platforms/lib_root.sh
source "$repo/tests/platforms/lib_root.sh"  # entering clean roots
suites=()
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suites+=("$(root_suite "${2:?--suite needs a Debian codename}")"); shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "readme_commands: error: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie)

say() { printf '[%s] readme_commands: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
[ "$(id -u)" = 0 ] || { echo "readme_commands: needs root (debootstrap, namespaces, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "readme_commands: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }

work=$(mktemp -d /var/tmp/gpudirect-readme.XXXXXX)
run_id=gpudirect-readme-$$
cleanup() {
  root_cgroups_remove "$run_id"
  if [ "$keep" = 0 ]; then
    find "$work" -mindepth 1 -maxdepth 1 -type d -exec rm -rf --one-file-system {} +
  fi
}
trap cleanup EXIT
results=()
status=0
for suite in "${suites[@]}"; do
  root=$work/$suite log=$work/$suite.log
  mkdir -p "$root"
  chmod 755 "$root"
  started=$SECONDS
  say "$suite: debootstrap --variant=minbase (log $log)"
  if ! debootstrap --variant=minbase "$suite" "$root" "$ROOT_MIRROR" >"$log" 2>&1; then
    results+=("$suite: debootstrap failed (log $log)")
    status=1
    continue
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mkdir -p "$root/root/gpudirect-slurm"
  git -C "$repo" archive HEAD | tar -x -C "$root/root/gpudirect-slurm"
  # The checkout's sibling ../shared (design notes) is not needed by either command.
  say "$suite: scripts/install-deps.sh with the network"
  if ! root_run "$root" -- bash -c 'cd /root/gpudirect-slurm && scripts/install-deps.sh' >>"$log" 2>&1; then
    results+=("$suite: install-deps.sh failed (log $log)")
    status=1
    continue
  fi
  deps_secs=$((SECONDS - started))
  # The namespace without DNS: an empty resolv.conf, or every lookup stalls about 20 s (lib_root.sh).
  : >"$root/etc/resolv.conf"
  # One namespace, one shell: each command's outcome is a line in the log ("readme-result: ...").
  commands='cd /root/gpudirect-slurm && export GPUDIRECT_OTHER_RELEASES=
    for command in "scripts/local-cluster.sh demo" "scripts/run-tests.sh"; do
      t0=$SECONDS
      echo "[$(date -u +%H:%M:%S)] readme_commands: $command"
      if $command; then outcome="passed in $((SECONDS - t0)) s"; else outcome="FAILED after $((SECONDS - t0)) s"; fi
      echo "readme-result: $command: $outcome"
    done'
  say "$suite: scripts/local-cluster.sh demo, then scripts/run-tests.sh, in one shell"
  root_run --net private --cgroups "$run_id-$suite" --hostname "readme-$suite" "$root" -- bash -c "$commands" >>"$log" 2>&1 || true
  for command in "scripts/local-cluster.sh demo" "scripts/run-tests.sh"; do
    outcome=$(sed -n "s|^readme-result: $command: ||p" "$log" | tail -1)
    case "$outcome" in
      passed*) results+=("$suite: $command: $outcome") ;;
      *) results+=("$suite: $command: ${outcome:-FAILED (no result)} (log $log)"); status=1 ;;
    esac
  done
  results+=("$suite: root and packages $deps_secs s, all $((SECONDS - started)) s")
done
for r in "${results[@]}"; do say "$r"; done
[ "$keep" = 0 ] || say "kept $work"
exit "$status"
