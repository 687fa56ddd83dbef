#!/usr/bin/env bash
# The NCCL backend on a GPU machine: every collective x type x op checked, then all_reduce and
# all_gather timed against nccl-tests on the same sizes. Two steps, because a GPU machine often
# has CUDA but not this project's Debian build dependencies:
#   perf/gpu_compare_nccl_tests.sh package DIR NCCL_TESTS_BUILD   (here: needs a release build with
#        NCCL and nccl-tests ALREADY BUILT by you, outside this repository (NCCL_TESTS_BUILD holds
#        all_reduce_perf and all_gather_perf); copies those binaries, ours and our libraries to DIR)
#   DIR/gpu_compare_nccl_tests.sh run                                 (there: prints the table)
# nccl-tests is a peer to measure against: it is never part of this repository.
set -euo pipefail
case "${1:-}" in
package)
  dir=${2:?DIR}; peer=${3:?NCCL_TESTS_BUILD (a directory holding nccl-tests binaries you built)}
  src=$(cd "$(dirname "$0")/.." && pwd)
  launch=$src/build/release/launcher/gpudirect-launch
  grep -q libnccl < <(ldd "$launch") || { echo "build with NCCL first (cmake --preset release finds /usr/local/cuda)" >&2; exit 1; }
  mkdir -p "$dir/bin" "$dir/lib"
  for c in all_reduce all_gather; do
    [ -x "$peer/${c}_perf" ] || { echo "no ${c}_perf in $peer: build nccl-tests yourself, outside this repository, and pass its build directory (nothing was compared)" >&2; exit 1; }
  done
  strip -o "$dir/bin/gpudirect-launch" "$launch"
  for c in all_reduce all_gather; do strip -o "$dir/bin/${c}_perf" "$peer/${c}_perf"; done
  # Our Debian libraries travel; libc, libstdc++, CUDA and NCCL are the GPU machine's own.
  ldd "$launch" | awk '/=>/ {print $1, $3}' | grep -vE '^(libc|libm|libstdc\+\+|libgcc_s|libpthread|librt|libdl|libnccl|libcudart)\.' |
    while read -r name path; do cp -L "$path" "$dir/lib/$name"; done
  cp "$0" "$dir/"
  du -sh "$dir"
  ;;
run)
  here=$(cd "$(dirname "$0")" && pwd)
  nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
  export LD_LIBRARY_PATH=$here/lib:${nccl}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  out=${OUT:-$(mktemp -d)}
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  for c in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
    timeout 120 "$here/bin/gpudirect-launch" bench "$c" -b 8 -e 1M -f 8 -d all -o all -n 3 -w 1 -c 1 --backend nccl >"$out/check_$c.txt" 2>&1
    echo "check $c rc=$? $(grep 'Out of bounds' "$out/check_$c.txt")"
  done
  for c in all_reduce all_gather; do
    timeout 100 "$here/bin/gpudirect-launch" bench "$c" -b 1M -e 1G -f 4 -n 50 -w 10 -c 0 --backend nccl >"$out/ours_$c.txt" 2>&1
    timeout 100 "$here/bin/${c}_perf" -b 1M -e 1G -f 4 -n 50 -w 10 -c 0 >"$out/peer_$c.txt" 2>&1
    echo "# $c: bytes, out-of-place time (us) ours / nccl-tests, busbw ratio ours/nccl-tests"
    join <(awk '$1 ~ /^[0-9]+$/ && NF >= 13 {print $1, $6}' "$out/ours_$c.txt" | sort -k1,1) \
         <(awk '$1 ~ /^[0-9]+$/ && NF >= 13 {print $1, $6}' "$out/peer_$c.txt" | sort -k1,1) | sort -n |
      awk '{printf "%12d %10.2f %10.2f %6.3f\n", $1, $2, $3, $3 / $2}'
  done
  ;;
*) sed -n '2,9p' "$0"; exit 6 ;;
esac
