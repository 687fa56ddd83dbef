#!/usr/bin/env bash
# Forward + backward step time of our fp32 CPU GPT against the same model in PyTorch on the CPU
# (Debian python3-torch): same shapes, batch, threads and fp32; medians of --steps steps after
# warmup. Prints ours, torch's and torch/ours (above 1.0 means we are faster).
# Usage: bench/train_cpu_vs_torch.sh [--threads N] [--steps S] [--build-dir DIR]
# Take numbers on a quiet machine, or under: flock /tmp/gpudirect-bench.lock bench/train_cpu_vs_torch.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
threads=$(nproc)
steps=10
build=$here/../build/release
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "train_cpu_vs_torch.sh: unknown argument '$1' (try --help)" >&2; exit 6 ;;
  esac
done
ours=$build/bench/train_cpu_step
[ -x "$ours" ] || { echo "train_cpu_vs_torch.sh: $ours is missing: cmake --build --preset release --target train_cpu_step" >&2; exit 1; }
python=""
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import torch" 2>/dev/null; then python=$candidate; break; fi
done
[ -n "$python" ] || { echo "train_cpu_vs_torch.sh: no python3 with torch (install Debian's python3-torch)" >&2; exit 1; }

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
printf '%-34s %8s %11s %11s %8s\n' model threads "ours (ms)" "torch (ms)" "ratio"
run() {
  local name=$1; shift
  local o t om tm
  o=$("$ours" "$@" --threads "$threads" --steps "$steps")
  t=$(OMP_NUM_THREADS=$threads "$python" "$here/train_torch_step.py" "$@" --threads "$threads" --steps "$steps")
  om=$(echo "$o" | field ms_median)
  tm=$(echo "$t" | field ms_median)
  printf '%-34s %8s %11s %11s %7.2fx\n' "$name" "$threads" "$om" "$tm" "$(awk -v t="$tm" -v o="$om" 'BEGIN { print t / o }')"
}
run "tiny (L2 C64 H4 T64 V512 B4)" --layers 2 --heads 4 --width 64 --seq-len 64 --vocab 512 --batch 4
run "small (L6 C384 H6 T256 V4096 B4)" --layers 6 --heads 6 --width 384 --seq-len 256 --vocab 4096 --batch 4
