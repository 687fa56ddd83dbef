#!/usr/bin/env bash
# gpudirect-launch train with --np local ranks (no Slurm needed):
#  - data parallelism: N ranks with micro-batch B/N end with the parameters of 1 rank with batch B
#    (N = 2, 3 with B = 6, 4), with and without ZeRO-1;
#  - the loss falls on the learnable mock data; token files (llm.c .bin) train too;
#  - preemption: SIGTERM mid-run writes a checkpoint and exits 10; --resume then gives exactly the
#    losses of an uninterrupted run (1 rank, and 2 ranks with ZeRO-1);
#  - corrupt, truncated and mismatched checkpoints are refused; usage errors exit 6.
set -uo pipefail
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${GPUDIRECT_BUILD_DIR:-$SRC/build/release}
LAUNCH=$BUILD/launcher/gpudirect-launch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && tail -n 15 "$2" | sed 's/^/    /'; }

# Small buckets so that even the tiny model has several and they overlap backward.
common=(train --backend libfabric --preset tiny --steps 5 --threads 1 --lr 1e-3 --peak-tflops 0.05 --first-bucket-mib 0.05 --bucket-mib 0.1)

# Same parameters at the end and the same loss and gradient norm at every step (tests/train/same_training.py).
SAME=$SRC/tests/train/same_training.py
for batch in 4 6; do
  "$LAUNCH" "${common[@]}" --micro-batch "$batch" --checkpoint "$work/one-$batch.ckpt" -J "$work/one-$batch.json" >"$work/one-$batch.log" 2>&1 \
    || fail "1 rank, micro-batch $batch" "$work/one-$batch.log"
done
for np in 2 3 4; do
  batch=$([ "$np" = 3 ] && echo 6 || echo 4)
  for zero in "" --zero1; do
    name="$np ranks x micro-batch $((batch / np))${zero:+ with ZeRO-1} = 1 rank x $batch"
    log=$work/np$np$zero.log
    if timeout 120 "$LAUNCH" --np "$np" "${common[@]}" --micro-batch $((batch / np)) $zero --checkpoint "$work/np$np$zero.ckpt" -J "$work/np$np$zero.json" >"$log" 2>&1; then
      if result=$(python3 "$SAME" "$work/one-$batch.ckpt" "$work/np$np$zero.ckpt" "$work/one-$batch.json" "$work/np$np$zero.json"); then pass "$name ($result)"; else fail "$name ($result)"; fi
    else
      fail "$name: exited $?" "$log"
    fi
  done
done
# ZeRO-1 forced at one rank: its shard, reduce-scatter and gather paths run (as on a one-GPU machine)
# and must give the replicated run's steps and parameters.
name="1 rank with ZeRO-1 forced (GPUDIRECT_TRAIN_ZERO1_AT_ONE_RANK=1) = 1 rank replicated"
GPUDIRECT_TRAIN_ZERO1_AT_ONE_RANK=1 "$LAUNCH" "${common[@]}" --micro-batch 4 --zero1 --checkpoint "$work/one-zero1.ckpt" \
  -J "$work/one-zero1.json" >"$work/one-zero1.log" 2>&1 || fail "$name: exited $?" "$work/one-zero1.log"
if grep -q "ZeRO-1 (sharded AdamW state)" "$work/one-zero1.log" &&
   result=$(python3 "$SAME" "$work/one-4.ckpt" "$work/one-zero1.ckpt" "$work/one-4.json" "$work/one-zero1.json"); then
  pass "$name ($result)"
else
  fail "$name (${result:-not sharded})" "$work/one-zero1.log"
fi
grep -q "parameters identical on all 4 rank(s)" "$work/np4.log" && pass "end-of-run parameter check across 4 ranks" || fail "no parameter check line" "$work/np4.log"

# The learnable mock data: the loss falls clearly in 30 steps.
"$LAUNCH" train --backend libfabric --preset tiny --steps 30 --threads 1 --lr 3e-3 --peak-tflops 0.05 -J "$work/learn.json" >"$work/learn.log" 2>&1
python3 -c "
import json, sys
steps = [json.loads(l) for l in open('$work/learn.json') if '\"step\"' in l and '\"type\":\"step\"' in l]
first, last = steps[0]['loss'], steps[-1]['loss']
print(f'loss {first:.3f} -> {last:.3f}')
sys.exit(0 if len(steps) == 30 and last < first - 1.0 else 1)" >"$work/learn.txt" 2>&1 \
  && pass "loss falls on learnable mock data ($(cat "$work/learn.txt"))" || fail "loss does not fall" "$work/learn.txt"

# The plot script turns the JSON lines into a PNG (where Debian's python3-matplotlib is installed).
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  "$SRC/scripts/plot_training.py" "$work/learn.json" "$work/learn.png" >"$work/plot.log" 2>&1 && [ -s "$work/learn.png" ] \
    && pass "plot_training.py writes a PNG" || fail "plot_training.py" "$work/plot.log"
else
  echo "SKIP: plot_training.py (no python3-matplotlib: scripts/install-deps.sh installs it)"
fi

# A token file in llm.c's format.
python3 -c "
import struct
tokens = [(i * 7 + i // 13) % 500 for i in range(20000)]
with open('$work/tokens.bin', 'wb') as f:
    f.write(struct.pack('<256i', 20240520, 1, len(tokens), *([0] * 253)))
    f.write(struct.pack(f'<{len(tokens)}H', *tokens))"
"$LAUNCH" --np 2 train --backend libfabric --preset tiny --steps 3 --threads 1 --data "$work/tokens.bin" --peak-tflops 0.05 >"$work/file.log" 2>&1 \
  && grep -q "llm.c .bin v1, 20000 tokens" "$work/file.log" && pass "llm.c token file" || fail "llm.c token file" "$work/file.log"
"$LAUNCH" train --backend libfabric --preset tiny --steps 3 --data "$work/missing.bin" >"$work/missing.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "cannot open" "$work/missing.log" && pass "missing token file: exit 1 with the reason" || fail "missing token file (rc $rc)" "$work/missing.log"

# Preemption: SIGTERM after a few steps, then --resume; the losses must equal the uninterrupted run's.
# Steps take about 10 ms on a quiet machine: enough of them that the signal lands mid-run.
steps=60
slow=(train --backend libfabric --preset tiny --seq-len 128 --steps $steps --threads 1 --peak-tflops 0.05 --first-bucket-mib 0.05 --bucket-mib 0.1)
losses() { python3 -c "
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get('type') == 'step': print(d['step'], repr(d['loss']))" "$1"; }
preempt() {  # name np extra-args...
  local name=$1 np=$2; shift 2
  local dir=$work/preempt-$np
  mkdir -p "$dir"
  "$LAUNCH" --np "$np" "${slow[@]}" "$@" -J "$dir/full.json" >"$dir/full.log" 2>&1 || { fail "$name: uninterrupted run" "$dir/full.log"; return; }
  "$LAUNCH" --np "$np" "${slow[@]}" "$@" --checkpoint "$dir/ck" -J "$dir/part.json" >"$dir/part.log" 2>&1 &
  local pid=$!
  for _ in $(seq 3000); do
    local seen
    seen=$(grep -c '"type":"step"' "$dir/part.json" 2>/dev/null)
    [ "${seen:-0}" -ge 3 ] && break
    sleep 0.01
  done
  kill -TERM "$pid"
  wait "$pid"
  local rc=$?
  local done_steps
  done_steps=$(grep -c '"type":"step"' "$dir/part.json")
  if [ $rc -ne 10 ] || ! grep -q "stopped by a signal" "$dir/part.log" || [ "$done_steps" -ge $steps ]; then
    fail "$name: SIGTERM should stop mid-run with exit 10 (rc $rc after $done_steps steps)" "$dir/part.log"; return
  fi
  "$LAUNCH" --np "$np" "${slow[@]}" "$@" --checkpoint "$dir/ck" --resume -J "$dir/part.json" >"$dir/resume.log" 2>&1 \
    || { fail "$name: --resume" "$dir/resume.log"; return; }
  if diff <(losses "$dir/full.json") <(losses "$dir/part.json") >"$dir/diff" && grep -q "resumed from .* at step $done_steps" "$dir/resume.log"; then
    pass "$name: stopped after step $done_steps, resumed: all $steps losses identical"
  else
    fail "$name: losses differ after resume" "$dir/diff"
  fi
}
preempt "preemption, 1 rank" 1
preempt "preemption, 2 ranks with ZeRO-1" 2 --zero1

# Refusals: corrupt, truncated, mismatched checkpoints; usage errors.
ck=$work/preempt-1/ck
cp "$ck" "$work/corrupt.ckpt"
printf 'X' | dd of="$work/corrupt.ckpt" bs=1 seek=5000 conv=notrunc status=none
head -c 3000 "$ck" >"$work/short.ckpt"
for kind in corrupt short; do
  "$LAUNCH" "${slow[@]}" --checkpoint "$work/$kind.ckpt" --resume >"$work/$kind.log" 2>&1
  rc=$?
  [ $rc -eq 1 ] && grep -qE "checksum mismatch|truncated" "$work/$kind.log" && pass "$kind checkpoint refused (exit 1)" || fail "$kind checkpoint (rc $rc)" "$work/$kind.log"
done
"$LAUNCH" "${slow[@]}" --layers 3 --checkpoint "$ck" --resume >"$work/mismatch.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "written with --layers 2, this run has 3" "$work/mismatch.log" && pass "mismatched checkpoint refused naming --layers" || fail "mismatch (rc $rc)" "$work/mismatch.log"
for bad in "--preset gpt5" "--heads 3" "--steps 0" "--resume" "--backend nccl"; do
  # shellcheck disable=SC2086
  "$LAUNCH" train $bad >"$work/usage.log" 2>&1
  rc=$?
  [ $rc -eq 6 ] && grep -q "gpudirect train" "$work/usage.log" && pass "usage error '$bad': exit 6" || fail "usage error '$bad' (rc $rc)" "$work/usage.log"
done

echo "test_train_local: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
