#!/usr/bin/env bash
# Our side of the GPU training comparison: gpt2-124m (L12 H12 C768 T1024 V50257) on one GPU with the
# CUDA model, mock data: tokens/s, MFU against the GPU's dense bf16 peak (H100 SXM 989 TFLOP/s),
# exposed communication and GPU memory, medians over the steps after the first. The peers (llm.c's
# train_gpt2cu, PyTorch eager and torch.compile) are run as the training note describes.
# Fails (exit 1) on a loss that is not finite or does not fall from the first step to the last.
# Prints "SKIPPED: ..." and exits 0 where the build has no CUDA model or no GPU is visible.
# Usage: perf/train_gpu.sh [BUILD_DIR] [MICRO_BATCH] [STEPS]   (defaults build/release 16 30)
set -euo pipefail
build=${1:-build/release}
micro_batch=${2:-16}
steps=${3:-30}
launch="$build/launcher/gpudirect-launch"
[ -x "$launch" ] || { echo "train_gpu: $launch not built (cmake --build --preset release --target gpudirect-launch)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set +e
"$launch" train --preset gpt2-124m --micro-batch "$micro_batch" --steps "$steps" --backend nccl --data mock --progress-seconds 0 \
  -J "$work/run.jsonl" >"$work/run.log" 2>&1
rc=$?
set -e
if [ $rc -ne 0 ]; then
  if grep -qE "no CUDA device|built without CUDA" "$work/run.log"; then
    echo "train_gpu: SKIPPED: $(grep -m1 -oE '(no CUDA device|built without CUDA)[^;]*' "$work/run.log")"
    exit 0
  fi
  cat "$work/run.log" >&2
  echo "train_gpu: gpudirect-launch train failed (exit $rc)" >&2
  exit 1
fi
grep -E "^gpudirect train: (backend|memory plan|GPU memory)" "$work/run.log"
python3 - "$work/run.jsonl" "$micro_batch" <<'PY'
import json, math, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
losses = [l["loss"] for l in lines if l["type"] == "step"]
if not losses or not all(math.isfinite(x) for x in losses):
    print(f"train_gpu: FAILED: a loss is not finite: {losses}")
    sys.exit(1)
if len(losses) > 1 and not losses[-1] < losses[0]:
    print(f"train_gpu: FAILED: the loss did not fall ({losses[0]:.4f} at step 1, {losses[-1]:.4f} at step {len(losses)})")
    sys.exit(1)
summary = next(l for l in lines if l["type"] == "summary")
print(f"gpt2-124m, micro-batch {sys.argv[2]} x T 1024, {summary['steps']} steps (medians after the first):")
print(f"  {summary['tokens_per_s']:,.0f} tokens/s, {summary['median_step_ms']:.1f} ms/step, {summary['tflops']:.1f} TFLOP/s, "
      f"MFU {100 * summary['mfu']:.1f}%, exposed comm {summary['median_exposed_comm_ms']:.2f} ms, "
      f"GPU memory {summary.get('gpu_memory_gib', float('nan')):.2f} GiB")
PY
