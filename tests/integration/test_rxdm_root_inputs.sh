#!/usr/bin/env bash
# What the root RxDM prolog/epilog (scripts/rxdm/gpudirect-rxdm) reads and writes outside its own
# settings: the settings file it sources, the ready file it writes, the job id it builds paths
# from. Each is run directly, as slurmd runs a prolog (a fixed environment, root), for a single-node
# A3 Mega job (no container: only the settings file and the ready file are touched). No Slurm
# cluster is needed: a stand-in scontrol first on PATH records the drain a failure asks for.
set -uo pipefail
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RXDM=$SRC/scripts/rxdm/gpudirect-rxdm
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (files owned by another user, a root prolog)"; exit 77; }
NOBODY=65534

T=$(mktemp -d /tmp/gpudirect-rxdm-inputs.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "$*" >>%s/scontrol.calls\n' "$T" >"$T/bin/scontrol"
chmod 755 "$T/bin/scontrol"
source "$SRC/tests/integration/checks.sh"

# run_rxdm CONFIG CONTEXT [VAR=VALUE...]: the script as slurmd runs it, its exit code and stderr in
# $rc and $err. With plant=PATH set, a symlink to $T/victim is first planted at PATH.<the script's
# pid> (exec keeps the pid): the old script's temporary ready file, "$READY.tmp.$$".
run_rxdm() {
  local config=$1 context=$2
  shift 2
  err=$([ -z "${plant:-}" ] || ln -s "$T/victim" "$plant.$BASHPID"
    exec env -i PATH="$T/bin:/usr/sbin:/usr/bin:/sbin:/bin" SLURM_SCRIPT_CONTEXT="${context}_slurmd" SLURM_JOB_ID=42 \
    SLURMD_NODENAME=testnode SLURM_JOB_NUM_NODES=1 GPUDIRECT_RXDM_CONFIG="$config" \
    "$@" "$RXDM" 2>&1 >/dev/null)
  rc=$?
}
# settings FILE READY_PATH [MORE...]: a settings file that also leaves a mark when it is sourced
settings() {
  local file=$1
  mkdir -p "$(dirname "$file")"
  printf 'RXDM_MACHINE_TYPE=a3-megagpu-8g\nRXDM_READY_FILE=%s\nRXDM_CONTAINER_CMD=false\n: >%s\n' "$2" "$T/sourced" >"$file"
  shift 2
  [ $# -eq 0 ] || printf '%s\n' "$@" >>"$file"
}
mkdir -p "$T/etc" "$T/run"

# 1. The settings file is sourced as root: only a file root alone can change.
config=$T/etc/rxdm.conf
settings "$config" "$T/run/rxdm.ready"
rm -f "$T/sourced"
run_rxdm "$config" prolog
expect_eq "a root-owned 0644 settings file in root's directories is sourced; the ready file is written" \
  "0 yes job=42 container=none mode=tcpxo" "$rc $([ -e "$T/sourced" ] && echo yes || echo no) $(cat "$T/run/rxdm.ready" 2>/dev/null)"

for bad in owner mode dir-mode dir-owner; do
  config=$T/$bad/rxdm.conf
  settings "$config" "$T/run/rxdm.ready"
  chmod 755 "$T/$bad"
  case $bad in
    owner) chown "$NOBODY" "$config"; why="$config is owned by uid $NOBODY, not root" ;;
    mode) chmod 0666 "$config"; why="$config is writable by group or others (mode 666)" ;;
    dir-mode) chmod 0777 "$T/$bad"; why="$T/$bad is writable by group or others (mode 777)" ;;
    dir-owner) chown "$NOBODY" "$T/$bad"; why="$T/$bad is owned by uid $NOBODY, not root" ;;
  esac
  rm -f "$T/sourced"
  run_rxdm "$config" prolog
  expect_eq "settings file ($bad: $why): refused, not sourced, the prolog fails" \
    "1 no" "$rc $([ -e "$T/sourced" ] && echo yes || echo no)"
  expect_eq "... with one line naming the file, the cause and the fix" \
    "gpudirect-rxdm: testnode job 42: refusing the settings file $config, which this root prolog would source: $why; make it and its directories root's and not writable by group or others (chown root, chmod go-w)" \
    "$err"
done
expect_contains "... and the node drains with that line" "nodename=testnode state=drain reason=gpudirect-rxdm: testnode job 42: refusing the settings file $T/dir-owner/rxdm.conf" "$(tail -1 "$T/scontrol.calls" 2>/dev/null)"

# 2. The ready file: written as root, so never through a symlink, and only in a directory that no
#    other user can change.
config=$T/etc/rxdm.conf
ready=$T/run/rxdm.ready
settings "$config" "$ready"
echo precious >"$T/victim"
rm -f "$ready"
# The old script's temporary file had a predictable name ($READY.tmp.<its pid>): plant a symlink there.
plant=$ready.tmp run_rxdm "$config" prolog
expect_eq "a symlink planted at a guessable temporary name next to the ready file: not followed, its target untouched" \
  "0 precious" "$rc $(cat "$T/victim")"
expect_eq "... and the ready file is a regular file with this job's line" "regular job=42 container=none mode=tcpxo" \
  "$([ -f "$ready" ] && [ ! -L "$ready" ] && echo regular) $(cat "$ready")"
left=$(find "$T/run" -mindepth 1 -not -name 'rxdm.ready.tmp.*' -printf '%f ')
expect_eq "... and no temporary file is left" "rxdm.ready " "$left"
rm -f "$T/run"/rxdm.ready.tmp.*

# A world-writable sticky directory (like /tmp): a user's symlink at the ready file's directory
# would send root's write (and its mkdir) wherever the user likes.
mkdir -p "$T/tmp" "$T/victim-dir"
chmod 1777 "$T/tmp"
ln -s "$T/victim-dir" "$T/tmp/gpudirect"
chown -h "$NOBODY" "$T/tmp/gpudirect"
settings "$config" "$T/tmp/gpudirect/rxdm.ready"
run_rxdm "$config" prolog
expect_eq "rxdm_ready= under a user's symlink in a sticky world-writable directory: refused, the symlink's target untouched" \
  "1 " "$rc $(ls -A "$T/victim-dir")"
expect_eq "... with one line naming the path, the cause and the fix" \
  "gpudirect-rxdm: testnode job 42: refusing the ready file $T/tmp/gpudirect/rxdm.ready (rxdm_ready=): $T/tmp/gpudirect is owned by uid $NOBODY, not root, so another user could redirect what root writes there; name a path in a directory only root can write, such as /run/gpudirect/rxdm.ready" \
  "$err"
settings "$config" "$T/tmp/rxdm.ready"
run_rxdm "$config" prolog
expect_eq "rxdm_ready= directly in a sticky world-writable directory: refused, nothing written there" \
  "1 gpudirect" "$rc $(ls -A "$T/tmp")"
expect_contains "... naming the directory" "$T/tmp is writable by group or others (mode 1777)" "$err"

# 3. The job id builds container names and the epilog's rm -rf of TCPX's socket dir: digits only.
mkdir -p "$T/run/tcpx-7" "$T/run/victim"
settings "$config" "$T/run/rxdm.ready" "RXDM_MACHINE_TYPE=a3-highgpu-8g" "RXDM_TCPX_UDS_PREFIX=$T/run/tcpx-"
run_rxdm "$config" epilog SLURM_JOB_ID=7/../victim
expect_eq "a SLURM_JOB_ID that is not a number: refused, the epilog removes nothing outside the job's socket dir" \
  "1 present" "$rc $([ -d "$T/run/victim" ] && echo present || echo removed)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
