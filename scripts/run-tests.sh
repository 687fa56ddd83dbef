#!/usr/bin/env bash
# Builds gpudirect-slurm and runs every test:
#   1. release build with warnings as errors: integration tests against a real local Slurm (munge,
#      slurmctld, two slurmd in network namespaces, fake GPUs through gres), PyTorch comparisons;
#   2. AddressSanitizer/UBSan build: the unit tests (--unit-only: in the release build instead);
#   3. libFuzzer (clang, core and the rendezvous store): every parser of outside input fuzzed a few seconds
#      (scripts/fuzz.sh; FUZZ_SECONDS=N per target, default 6).
#   4. the oldest Slurm we support, in a clean Debian 11 root (Slurm 20.11, GCC 10, CMake 3.18):
#      the plugin built with that release's toolchain and its Slurm-dependent integration tests on a
#      local cluster inside the root (tests/platforms/release_matrix.sh; Debian 12 is the host's).
#      GPUDIRECT_OTHER_RELEASES=LIST (Debian codenames; default bullseye) runs others instead, and
#      empty none (it needs the Debian archive the first time, for debootstrap).
#   2, 3 and 4 run beside 1's tests (the builds of 2 and 3 at the lowest priority); their output
#      is printed after 1's.
# Needs root (the local cluster creates namespaces and runs Slurm daemons). Installs its Debian
# packages itself. Usage: sudo scripts/run-tests.sh [--unit-only]
set -euo pipefail
cd "$(dirname "$0")/.."

unit_only=0
case "${1:-}" in
  --unit-only) unit_only=1 ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "run-tests.sh: unknown argument '$1' (try --help)" >&2; exit 6 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
  echo "run-tests.sh: run as root (sudo): the integration tests start Slurm daemons and network namespaces" >&2
  exit 1
fi

step() { printf '\n=== %s (%s)\n' "$1" "$(date +%T)"; }
# The background parts below are sessions of their own (setsid). Where the kernel shares the CPU
# between sessions first (autogroup: /proc/sys/kernel/sched_autogroup_enabled, on in Debian's
# kernels), the nice of a process counts only inside its session; the session's own nice
# (/proc/PID/autogroup) sets its share. session_nice PID N sets both.
session_nice() {
  renice -n "$2" -g "$1" >/dev/null 2>&1 || true
  echo "$2" >"/proc/$1/autogroup" 2>/dev/null || true
}

step "installing Debian packages"
scripts/install-deps.sh

step "release build (warnings are errors)"
cmake --preset ci >/dev/null
cmake --build --preset ci

# The sanitizer and fuzz work needs no cluster, so it runs beside the release tests (those mostly
# wait on Slurm, timeouts and sleeping ranks): the builds at the lowest CPU priority, so they take
# only the cycles the tests leave; then, at normal priority, the unit tests under ASan/UBSan and the
# fuzzing. Its own session and process group, so that an early exit stops it too. Each part logs to
# its own file, printed after the release tests, in the order they ran.
exhaustive_unit_test="unit:every collective algorithm at 1..8 ranks"  # run in the release build only
asan_build_log=build/asan-and-fuzz-build.log asan_test_log=build/asan-unit-tests.log fuzz_log=build/fuzz.log
rm -f build/asan-and-fuzz.status
setsid bash -c '
  echo 19 >/proc/$$/autogroup 2>/dev/null || true  # the session at the lowest priority while it builds
  fail() { echo "$1" >build/asan-and-fuzz.status; exit 1; }
  { cmake --preset ci-asan >/dev/null && nice -n 19 cmake --build --preset ci-asan --target unit_tests &&
    cmake --preset fuzz >/dev/null && nice -n 19 cmake --build --preset fuzz; } >"$1" 2>&1 || fail "the ASan/UBSan or fuzz build failed (log: $1)"
  echo 0 >/proc/$$/autogroup 2>/dev/null || true
  ctest --preset ci-asan -L unit -E "^$4" -j2 >"$2" 2>&1 || fail "unit tests failed under ASan/UBSan (log: $2)"
  scripts/fuzz.sh "${FUZZ_SECONDS:-6}" >"$3" 2>&1 || fail "fuzzing found a failure (log: $3)"
  echo ok >build/asan-and-fuzz.status' background "$asan_build_log" "$asan_test_log" "$fuzz_log" "$exhaustive_unit_test" &
background=$!

# Another Debian release beside them: a clean root made with debootstrap (mostly waiting on the
# archive), the build with that release's toolchain and its Slurm-dependent integration tests on a
# local cluster inside the root (tests/platforms/release_matrix.sh). Debian 11 catches the most: the
# oldest Slurm (it gives a task no per-task GPU variable), GCC and CMake the plugin must build with.
# At normal priority: its tests run on Slurm's timeouts too. Its own session, as above.
matrix_log=build/release-matrix.log matrix_table=build/release-matrix.md
rm -f build/release-matrix.status
other_releases=${GPUDIRECT_OTHER_RELEASES-bullseye}
if [ "$unit_only" = 0 ] && [ -n "$other_releases" ]; then
  setsid bash -c 'tests/platforms/release_matrix.sh --releases "$3" --out "$2" >"$1" 2>&1; echo $? >build/release-matrix.status' \
    matrix "$matrix_log" "$matrix_table" "$other_releases" &
  matrix=$!
fi
trap 'kill -- -"$background" 2>/dev/null || true; [ -z "${matrix:-}" ] || kill -- -"$matrix" 2>/dev/null || true' EXIT

step "integration tests (release; beside them: the ASan/UBSan and fuzz builds at the lowest priority, then their tests; ${other_releases:-no other release} in a clean root)"
if [ "$unit_only" = 1 ]; then
  ctest --preset ci -L unit -j2
else
  # The unit tests run once, in the ASan/UBSan build (below), but for the exhaustive collectives
  # case (every algorithm, rank count, type and op): 40 s here, 180 s under ASan. Then everything
  # else: the integration tests (RUN_SERIAL: one cluster) and the PyTorch comparisons.
  ctest --preset ci -R "^$exhaustive_unit_test"
  ctest --preset ci -j2 -LE unit
fi

step "waiting for the ASan/UBSan unit tests, the fuzzing and the other releases"
# Nothing else of ours runs now: back to normal priority, or on a machine kept busy by other work
# at nice 0 a nice-19 build would get almost no CPU (CFS weights 15 against 1024) and stall CI.
session_nice "$background" 0
failures=()
wait "$background" || true
status=$(cat build/asan-and-fuzz.status 2>/dev/null || echo "the ASan/UBSan and fuzz job ended without a result")
[ "$status" = ok ] || failures+=("$status")
step "unit tests under ASan/UBSan"
if [ -s "$asan_test_log" ]; then cat "$asan_test_log"; else tail -40 "$asan_build_log"; fi
step "fuzzing every parser of outside input (libFuzzer, ${FUZZ_SECONDS:-6} s per target)"
[ -s "$fuzz_log" ] && cat "$fuzz_log"
if [ -n "${matrix:-}" ]; then
  wait "$matrix" || true
  step "other releases ($other_releases; bullseye: Slurm 20.11, GCC 10, CMake 3.18): the build and the Slurm-dependent integration tests in a clean root"
  matrix_status=$(cat build/release-matrix.status 2>/dev/null || echo "no exit status")
  if [ "$matrix_status" = 0 ]; then
    grep -E '^\[' "$matrix_log" || true
    cat "$matrix_table"
  else
    tail -60 "$matrix_log"
    failures+=("the release matrix ($other_releases) failed (exit $matrix_status; log: $matrix_log)")
  fi
fi
for f in "${failures[@]}"; do echo "run-tests.sh: $f" >&2; done
[ ${#failures[@]} -eq 0 ] || exit 1

step "done"
