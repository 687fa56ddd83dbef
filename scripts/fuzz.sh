#!/usr/bin/env bash
# Fuzzes every parser of outside input (tests/fuzz/) with libFuzzer for a bounded time each:
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 8 s each, every target)
# Builds the preset `fuzz` (clang: core, and the launcher's rendezvous store for `store`) first.
# Each target starts from its seed corpus tests/fuzz/corpus/<target>/ and grows a working corpus
# under build/fuzz/corpus/<target>/ (kept between runs, not committed). A crash, leak, sanitizer
# report or hang (>10 s on one input) is saved as tests/fuzz/regressions/<target>/<kind>-<sha1>:
# commit it with the fix, and the unit tests replay it forever (ctest -L unit: "fuzz inputs replay
# <target>"). Exit status 1 when any target failed. The last line per target gives executions and
# corpus size (docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=8
case "${1:-}" in
  -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  ''|*[!0-9]*) ;;
  *) seconds=$1; shift ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(mode plugin_config network_profile hostlist slurm_tasks gpu_selection hwloc_xml nccl_xml store elf_version_needs)

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found: install clang and libclang-rt-dev (scripts/install-deps.sh)" >&2; exit 1; }
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]/#/fuzz_}" >/dev/null

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for target in "${targets[@]}"; do
  binary=build/fuzz/tests/fuzz/fuzz_$target
  seeds=tests/fuzz/corpus/$target
  work=build/fuzz/corpus/$target
  regressions=tests/fuzz/regressions/$target
  mkdir -p "$work" "$regressions"
  max_len=4096
  case "$target" in hwloc_xml|nccl_xml|elf_version_needs) max_len=32768 ;; esac
  log=build/fuzz/$target.log
  status=0
  # The first directory is the growing corpus; the seed directory is only read.
  "$binary" "$work" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
    -artifact_prefix="$regressions/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus_files=$(find "$work" -type f | wc -l)
  corpus_bytes=$(du -sb "$work" | cut -f1)
  printf 'fuzz %-16s %3s s  %9s executions  corpus %5s inputs %8s bytes  %s\n' "$target" "$seconds" "${execs:-?}" \
    "$corpus_files" "$corpus_bytes" "$([ $status = 0 ] && echo ok || echo "FAILED (see $log)")"
  if [ $status != 0 ]; then
    failed+=("$target")
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$log" | head -8 | sed 's/^/    /'
  fi
  rmdir "$regressions" 2>/dev/null || true  # keep only directories that hold an input
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: ${failed[*]} failed: the inputs are in tests/fuzz/regressions/; fix the parser, commit both" >&2
  exit 1
fi
