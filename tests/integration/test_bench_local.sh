#!/usr/bin/env bash
# gpudirect-launch bench with --np local ranks (staged through shared memory, libfabric shm for the
# rest): every collective, op and type, rank counts 1, 2, 3, 8, sizes whose element counts do not
# divide by the rank count; the large-message paths staged and over messages. Output parsed the way
# users' nccl-tests scripts do. (4 and 5 ranks, and every algorithm at 1-8 ranks, run in process:
# unit "every collective algorithm at 1..8 ranks, ...".)
set -uo pipefail
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${GPUDIRECT_BUILD_DIR:-$SRC/build/release}
LAUNCH=$BUILD/launcher/gpudirect-launch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && tail -n 15 "$2" | sed 's/^/    /'; }

# What a parsing script reads: data rows (11 columns after the 5 leading ones) and the footers.
parse_ok() {
  awk '/^(\[0\] )? +[0-9]+ +[0-9]+ / { rows++; n = NF; if ($(n) != 0 || $(n-4) != 0) bad++ }
       /Out of bounds values : 0 OK/ { footer++ }
       /Avg bus bandwidth/ { avg++ }
       END { exit !(rows > 0 && bad == 0 && footer == 1 && avg == 1) }' "$1"
}

for np in 1 2 3 8; do
  for collective in all_reduce reduce_scatter reduce all_gather broadcast alltoall sendrecv; do
    case $collective in all_reduce|reduce_scatter|reduce) ops=all ;; *) ops=sum ;; esac
    root=$((np - 1))
    log=$work/$collective-$np.log
    if timeout 300 "$LAUNCH" --np "$np" --timeout 60 bench "$collective" -b 8 -e 1M -f 40 -d all -o "$ops" -r "$root" -n 2 -w 1 -c 1 >"$log" 2>&1; then
      if parse_ok "$log"; then pass; else fail "$collective with $np ranks: wrong results or malformed table" "$log"; fi
    else
      fail "$collective with $np ranks exited $?" "$log"
    fi
  done
done

# The large-message paths: staged through shared memory (the default on one host), and with staging
# off under both ways shm may use CMA: as measured at startup (on a VM: off, the ring's messages
# only) and forced on (direct reads of peers' buffers from 1-4 MiB).
# 786436 bytes at 3 ranks: blocks of unequal size at a chunk boundary (the ring once hung there).
for mode in staged messages cma; do
  case $mode in
    staged) mode_env=() ;;
    messages) mode_env=(GPUDIRECT_COMM_STAGING=0) ;;
    cma) mode_env=(GPUDIRECT_COMM_STAGING=0 FI_SHM_DISABLE_CMA=0) ;;
  esac
  for np in 2 3; do
    for collective in all_reduce all_gather reduce_scatter; do
      log=$work/large-$collective-$np-$mode.log
      if timeout 300 env "${mode_env[@]}" "$LAUNCH" --np "$np" --timeout 60 bench "$collective" -b 786436 -e 16M -f 6 -o avg -n 2 -w 1 -c 1 \
          >"$log" 2>&1; then
        if ! parse_ok "$log"; then fail "$collective with $np ranks, $mode: wrong results or malformed table" "$log"
        elif [ "$mode" = staged ] && ! grep -q "libfabric:shm+staging" "$log"; then fail "$collective with $np ranks: not staged on one host" "$log"
        elif [ "$mode" != staged ] && grep -q "+staging" "$log"; then fail "$collective with $np ranks: staged although GPUDIRECT_COMM_STAGING=0" "$log"
        else pass; fi
      else
        fail "$collective with $np ranks, $mode, exited $?" "$log"
      fi
    done
  done
done

# nccl-tests binary names, JSON output and the threshold's exit code.
json=$work/out.json
"$LAUNCH" --np 2 bench all_reduce_perf -b 64K -e 64K -n 3 -J "$json" >"$work/json.log" 2>&1 && python3 -c "
import json,sys; d=json.load(open('$json')); r=d['rows'][0]
sys.exit(0 if d['ranks']==2 and r['size']==65536 and len(r['out_of_place']['rank_times_us'])==2 and d['wrong_total']==0 else 1)" \
  && pass || fail "JSON output" "$work/json.log"
"$LAUNCH" --np 2 bench all_gather -b 64K -e 64K -n 3 --min-busbw 100000 >"$work/min.log" 2>&1
rc=$?
[ $rc -eq 7 ] && grep -q "Avg bus bandwidth.*FAILED" "$work/min.log" && pass || fail "--min-busbw under threshold should exit 7 (got $rc)" "$work/min.log"
NCCL_TESTS_MIN_BW=100000 "$LAUNCH" --np 2 bench all_gather -b 64K -e 64K -n 3 >"$work/env.log" 2>&1
rc=$?
[ $rc -eq 7 ] && pass || fail "NCCL_TESTS_MIN_BW under threshold should exit 7 (got $rc)" "$work/env.log"
"$LAUNCH" bench gather -b 8 >"$work/usage.log" 2>&1
rc=$?
[ $rc -eq 6 ] && grep -q "unknown collective 'gather'" "$work/usage.log" && pass || fail "unknown collective: exit 6 with message (got $rc)" "$work/usage.log"
"$LAUNCH" bench all_reduce -d float128 >"$work/usage2.log" 2>&1
[ $? -eq 6 ] && grep -q "unknown datatype 'float128'" "$work/usage2.log" && pass || fail "unknown datatype: exit 6" "$work/usage2.log"

# A rank that never reaches the rendezvous is a bounded, clear error.
# took START: seconds since START (an $EPOCHREALTIME), one decimal; under T MAX: T < MAX.
took() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
under() { awk -v t="$1" -v max="$2" 'BEGIN { exit !(t < max) }'; }
# --timeout 2 (measured 1.8 s); bound: the timeout plus 2 s for a loaded machine.
start=$EPOCHREALTIME
GPUDIRECT_RENDEZVOUS_SECRET=0123456789abcdef0123456789abcdef GPUDIRECT_LAUNCH_RANK=1 GPUDIRECT_LAUNCH_SIZE=2 GPUDIRECT_LAUNCH_PORT=1 \
  "$LAUNCH" --timeout 2 bench all_reduce -b 8 -e 8 >"$work/rdv.log" 2>&1
rc=$? t=$(took "$start")
[ $rc -eq 4 ] && under "$t" 4 && grep -q "cannot reach the rendezvous at 127.0.0.1:1" "$work/rdv.log" && pass \
  || fail "unreachable rendezvous: exit 4 within 4 s (--timeout 2) with a message (rc $rc, $t s)" "$work/rdv.log"
# A rank without the rendezvous secret (torchrun-style, nothing set it) refuses at once, saying how.
env -u GPUDIRECT_RENDEZVOUS_SECRET RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$LAUNCH" --timeout 2 rendezvous-check >"$work/nosecret.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "no GPUDIRECT_RENDEZVOUS_SECRET" "$work/nosecret.log" && grep -qF 'export GPUDIRECT_RENDEZVOUS_SECRET=$(od -An -tx1 -N16 /dev/urandom' "$work/nosecret.log" && pass \
  || fail "no rendezvous secret: refused with the way to set one (rc $rc)" "$work/nosecret.log"
# Only rank 0 fails (it alone writes the JSON file): --np reports it and nothing hangs.
# Measured 0.6-0.7 s, start-up included; bound: --np's documented 2 s after the failure plus 1 s.
start=$EPOCHREALTIME
"$LAUNCH" --np 2 --timeout 3 bench all_reduce -b 8 -e 8 -J /nonexistent/dir/out.json >"$work/fail.log" 2>&1
rc=$? t=$(took "$start")
[ $rc -ne 0 ] && under "$t" 3 && grep -qE "rank [0-9]+ exited with code" "$work/fail.log" && pass \
  || fail "a failing rank fails --np within 3 s (rc $rc, $t s)" "$work/fail.log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
