#!/usr/bin/env bash
# Builds gpudirect-slurm and runs every test:
#   1. release build with warnings as errors: unit tests + integration tests against a real local
#      Slurm (munge, slurmctld, two slurmd in network namespaces, fake GPUs through gres);
#   2. AddressSanitizer/UBSan build: the unit tests again;
#   3. libFuzzer (clang, core and the rendezvous store): every parser of outside input fuzzed a few seconds
#      (scripts/fuzz.sh; FUZZ_SECONDS=N per target, default 6).
#   4. the oldest Slurm we support, in a clean Debian 11 root (Slurm 20.11, GCC 10, CMake 3.18):
#      the plugin built with that release's toolchain and its Slurm-dependent integration tests on a
#      local cluster inside the root (tests/platforms/release_matrix.sh; Debian 12 is the host's).
#   2, 3 and 4 run beside 1 (at nice 19 and 10); their output is printed after 1's.
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

step "installing Debian packages"
scripts/install-deps.sh

# The other release first, in the background: making its root is mostly waiting on the archive
# (debootstrap, apt), which overlaps the host's build. Debian 11 catches the most: the oldest Slurm
# (no per-task GPU variables), GCC and CMake the plugin must build with. Its own process group, so
# that an early exit stops it too.
matrix_log=build/release-matrix.log matrix_table=build/release-matrix.md
mkdir -p build
rm -f build/release-matrix.status
if [ "$unit_only" = 0 ]; then
  setsid bash -c 'nice -n 10 tests/platforms/release_matrix.sh --releases bullseye --out "$2" >"$1" 2>&1; echo $? >build/release-matrix.status' \
    matrix "$matrix_log" "$matrix_table" &
  matrix=$!
fi

step "release build (warnings are errors)"
cmake --preset ci >/dev/null
cmake --build --preset ci

# The sanitizer and fuzz work needs no cluster, so it runs beside the release tests (those mostly
# wait on Slurm, timeouts and sleeping ranks): the builds at the lowest CPU priority, so they take
# only the cycles the tests leave; then, at normal priority, the unit tests under ASan/UBSan and the
# fuzzing. Its own process group, so that an early exit stops it too. Each part logs to its own file,
# printed after the release tests, in the order they ran.
asan_build_log=build/asan-and-fuzz-build.log asan_test_log=build/asan-unit-tests.log fuzz_log=build/fuzz.log
rm -f build/asan-and-fuzz.status
setsid bash -c '
  fail() { echo "$1" >build/asan-and-fuzz.status; exit 1; }
  { cmake --preset ci-asan >/dev/null && nice -n 19 cmake --build --preset ci-asan --target unit_tests &&
    cmake --preset fuzz >/dev/null && nice -n 19 cmake --build --preset fuzz; } >"$1" 2>&1 || fail "the ASan/UBSan or fuzz build failed (log: $1)"
  ctest --preset ci-asan -L unit -j2 >"$2" 2>&1 || fail "unit tests failed under ASan/UBSan (log: $2)"
  scripts/fuzz.sh "${FUZZ_SECONDS:-6}" >"$3" 2>&1 || fail "fuzzing found a failure (log: $3)"
  echo ok >build/asan-and-fuzz.status' background "$asan_build_log" "$asan_test_log" "$fuzz_log" &
background=$!
trap 'kill -- -"$background" 2>/dev/null || true; [ -z "${matrix:-}" ] || kill -- -"$matrix" 2>/dev/null || true' EXIT

step "unit and integration tests (release; beside them: the ASan/UBSan and fuzz builds at nice 19, then their tests)"
if [ "$unit_only" = 1 ]; then
  ctest --preset ci -L unit -j2
else
  ctest --preset ci -j2  # unit tests two at a time; integration tests are RUN_SERIAL (one cluster)
fi

step "waiting for the ASan/UBSan unit tests, the fuzzing and Debian 11"
# Nothing else of ours runs now: back to normal priority, or on a machine kept busy by other work
# at nice 0 a nice-19 build would get almost no CPU (CFS weights 15 against 1024) and stall CI.
renice -n 0 -g "$background" >/dev/null 2>&1 || true
[ -z "${matrix:-}" ] || renice -n 0 -g "$matrix" >/dev/null 2>&1 || true
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
  step "Debian 11 (Slurm 20.11, GCC 10, CMake 3.18): the plugin and its Slurm-dependent integration tests in a clean root"
  matrix_status=$(cat build/release-matrix.status 2>/dev/null || echo "no exit status")
  if [ "$matrix_status" = 0 ]; then
    grep -E '^\[' "$matrix_log" || true
    cat "$matrix_table"
  else
    tail -60 "$matrix_log"
    failures+=("the Debian 11 run failed (exit $matrix_status; log: $matrix_log)")
  fi
fi
for f in "${failures[@]}"; do echo "run-tests.sh: $f" >&2; done
[ ${#failures[@]} -eq 0 ] || exit 1

step "done"
