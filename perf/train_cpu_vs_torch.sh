#!/usr/bin/env bash
# Forward + backward step time of our fp32 CPU GPT against the same model in PyTorch on the CPU
# (Debian python3-torch): same shapes, batch, threads and fp32; medians of --steps steps after
# warmup, best of --repeats runs of each. Prints wall and CPU time (all threads) per step, ours and
# torch's, and torch/ours (above 1.0 means we are faster). On a shared machine wall time swings with
# the load; with --threads 1 the CPU time is the steadier comparison. PyTorch does not size
# OpenBLAS's thread pool itself, so OPENBLAS_NUM_THREADS is set to --threads for it (our model sets
# the same through openblas_set_num_threads).
# Usage: perf/train_cpu_vs_torch.sh [--threads N] [--steps S] [--repeats R] [--build-dir DIR]
# Take numbers on a quiet machine, or under: flock /tmp/gpudirect-bench.lock perf/train_cpu_vs_torch.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
threads=$(nproc)
steps=10
repeats=3
build=$here/../build/release
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "train_cpu_vs_torch.sh: unknown argument '$1' (try --help)" >&2; exit 6 ;;
  esac
done
ours=$build/perf/train_cpu_step
[ -x "$ours" ] || { echo "train_cpu_vs_torch.sh: $ours is missing: cmake --build --preset release --target train_cpu_step" >&2; exit 1; }
python=""
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import torch" 2>/dev/null; then python=$candidate; break; fi
done
[ -n "$python" ] || { echo "train_cpu_vs_torch.sh: no python3 with torch (install Debian's python3-torch)" >&2; exit 1; }

field() { awk -v key="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) print kv[2] } }'; }
min() { sort -g | head -1; }
printf '%-34s %7s %10s %10s %7s %10s %10s %7s\n' model threads "ours ms" "torch ms" ratio "ours cpu" "torch cpu" ratio
run() {
  local name=$1; shift
  local o="" t="" i
  for ((i = 0; i < repeats; i++)); do  # alternate, so both see the same load
    o+=$("$ours" "$@" --threads "$threads" --steps "$steps")$'\n'
    t+=$(OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads "$python" "$here/train_torch_step.py" "$@" \
           --threads "$threads" --steps "$steps")$'\n'
  done
  local om tm oc tc
  om=$(echo -n "$o" | field ms_median | min); tm=$(echo -n "$t" | field ms_median | min)
  oc=$(echo -n "$o" | field cpu_ms_median | min); tc=$(echo -n "$t" | field cpu_ms_median | min)
  printf '%-34s %7s %10s %10s %6.2fx %10s %10s %6.2fx\n' "$name" "$threads" "$om" "$tm" \
    "$(awk -v a="$tm" -v b="$om" 'BEGIN { print a / b }')" "$oc" "$tc" "$(awk -v a="$tc" -v b="$oc" 'BEGIN { print a / b }')"
}
run "tiny (L2 C64 H4 T64 V512 B4)" --layers 2 --heads 4 --width 64 --seq-len 64 --vocab 512 --batch 4
run "small (L6 C384 H6 T256 V4096 B4)" --layers 6 --heads 6 --width 384 --seq-len 256 --vocab 4096 --batch 4
