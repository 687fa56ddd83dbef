#!/usr/bin/env bash
# Our libfabric backend (gpudirect-launch --np N bench) against Gloo (ring allreduce, allgather over
# TCP) and Open MPI (MPI_Allreduce, MPI_Allgather) on this machine, in one run: all_reduce and
# all_gather, 2 and 4 ranks, 4 KiB..256 MiB. Every tool times the same way (pre-faulted buffers
# reused, warm-up, mean per iteration on rank 0); each measurement is repeated REPS times and the
# median taken. Open MPI runs twice: default malloc, and malloc tuned so its per-call scratch
# buffers are not unmapped and page-faulted again every call. Prints ratios: peer time / our time
# (above 1: we are faster). Also measures this machine's memcpy bandwidth for reference.
#   bench/compare_cpu_collectives.sh [BUILD_DIR]    (needs libgloo-dev, openmpi-bin, libopenmpi-dev)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build/release}
launch=$build/launcher/gpudirect-launch
peers=$src/build/peers/bin
REPS=${REPS:-3}
ITERS=${ITERS:-10}
MIN=${MIN:-4096}
MAX=${MAX:-268435456}
mkdir -p "$peers"
[ -x "$launch" ] || { echo "build first: cmake --preset release && cmake --build --preset release" >&2; exit 1; }
echo "compare: building the peer drivers"
mpicxx -O2 -std=c++17 "$src/bench/peers/mpi_collectives.cpp" -o "$peers/mpi_collectives"
g++ -O2 -std=c++17 "$src/bench/peers/gloo_collectives.cpp" -o "$peers/gloo_collectives" -lgloo -pthread
g++ -O2 -std=c++17 -x c++ - -o "$peers/memcpy_bandwidth" <<'CPP'
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstring>
int main() {
  const std::size_t bytes = 256u << 20;
  auto* a = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0));
  auto* b = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0));
  std::memset(a, 1, bytes); std::memset(b, 2, bytes);
  double best = 0;
  for (int i = 0; i < 10; ++i) {
    const auto t = std::chrono::steady_clock::now();
    std::memcpy(i % 2 ? a : b, i % 2 ? b : a, bytes);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    if (bytes / s / 1e9 > best) best = bytes / s / 1e9;
  }
  std::printf("%.2f\n", best);
}
CPP
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ours() {  # collective np -> "bytes us" lines
  "$launch" --np "$2" bench "$1" -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w 3 -c 0 -a 0 --backend libfabric 2>&1 |
    awk '/^\[0\] +[0-9]+ +[0-9]+ / {print $2, $7}'
}
mpi() {  # collective np [tuned]
  local env=()
  [ "${3:-}" = tuned ] && env=(-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=1000000000000)
  mpirun --allow-run-as-root --oversubscribe -np "$2" "${env[@]}" "$peers/mpi_collectives" -c "$1" -b "$MIN" -e "$MAX" -n "$ITERS" -w 3 2>/dev/null
}
gloo() {  # collective np
  local store=$work/gloo-$RANDOM pids=()
  mkdir -p "$store"
  for r in $(seq 1 $(($2 - 1))); do "$peers/gloo_collectives" "$r" "$2" "$store" -c "$1" -b "$MIN" -e "$MAX" -n "$ITERS" -w 3 >/dev/null & pids+=($!); done
  "$peers/gloo_collectives" 0 "$2" "$store" -c "$1" -b "$MIN" -e "$MAX" -n "$ITERS" -w 3
  wait "${pids[@]}"
}
median_of() {  # files... -> "bytes median_us spread%"
  cat "$@" | awk '{t[$1] = t[$1] " " $2} END {for (s in t) print s, t[s]}' | sort -n | while read -r size times; do
    printf '%s %s\n' "$size" "$(printf '%s\n' $times | sort -g | awk '{v[NR]=$1} END {m=v[int((NR+1)/2)]; printf "%.2f %.0f", m, (v[NR]-v[1])/m*100}')"
  done
}

echo "compare: memcpy bandwidth on this machine: $("$peers/memcpy_bandwidth") GB/s (256 MiB, best of 10)"
for collective in all_reduce all_gather; do
  for np in 2 4; do
    for tool in ours gloo mpi mpi_tuned; do
      for rep in $(seq 1 "$REPS"); do
        case $tool in
          ours) ours "$collective" "$np" ;;
          gloo) gloo "$collective" "$np" ;;
          mpi) mpi "$collective" "$np" ;;
          mpi_tuned) mpi "$collective" "$np" tuned ;;
        esac >"$work/$tool.$rep"
      done
      median_of "$work/$tool".* >"$work/$tool.median"
      rm -f "$work/$tool".[0-9]*
    done
    echo
    echo "# $collective, $np ranks: median time per call (us, spread %) and ratio peer/ours (>1: ours faster)"
    printf '# %10s %16s %16s %16s %16s %8s %8s %8s %10s\n' bytes ours gloo mpi mpi_tuned gloo/ours mpi/ours mpi_t/ours ours_busbw
    join <(sort -k1,1 "$work/ours.median") <(sort -k1,1 "$work/gloo.median") | join - <(sort -k1,1 "$work/mpi.median") |
      join - <(sort -k1,1 "$work/mpi_tuned.median") | sort -n | awk -v n="$np" -v c="$collective" '{
        f = (c == "all_reduce") ? 2 * (n - 1) / n : (n - 1) / n;
        printf "  %10d %10.1f (%2d%%) %10.1f (%2d%%) %10.1f (%2d%%) %10.1f (%2d%%) %8.2f %8.2f %8.2f %8.2f GB/s\n",
          $1, $2, $3, $4, $5, $6, $7, $8, $9, $4 / $2, $6 / $2, $8 / $2, $1 / $2 / 1000 * f }'
  done
done
