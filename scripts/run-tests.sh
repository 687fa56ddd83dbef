#!/usr/bin/env bash
# Builds gpudirect-slurm and runs every test:
#   1. release build with warnings as errors: unit tests + integration tests against a real local
#      Slurm (munge, slurmctld, two slurmd in network namespaces, fake GPUs through gres);
#   2. AddressSanitizer/UBSan build (compiled at low priority while 1's tests run): the unit tests again;
#   3. libFuzzer (clang, core and the rendezvous store): every parser of outside input fuzzed a few seconds
#      (scripts/fuzz.sh; FUZZ_SECONDS=N per target, default 6).
# Needs root (the local cluster creates namespaces and runs Slurm daemons). Installs its Debian
# packages itself. Usage: sudo scripts/run-tests.sh [--unit-only]
set -euo pipefail
cd "$(dirname "$0")/.."

unit_only=0
case "${1:-}" in
  --unit-only) unit_only=1 ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

step "release build (warnings are errors)"
cmake --preset ci >/dev/null
cmake --build --preset ci

# The sanitizer and fuzz builds need no cluster: they compile at the lowest CPU priority while the
# release tests run (those mostly wait on Slurm, timeouts and sleeping ranks), so they take only the
# cycles the tests leave. Their own process group, so that an early exit stops them too.
background_log=build/background-builds.log
setsid bash -c 'set -e
  cmake --preset ci-asan >/dev/null && nice -n 19 cmake --build --preset ci-asan --target unit_tests
  cmake --preset fuzz >/dev/null && nice -n 19 cmake --build --preset fuzz' >"$background_log" 2>&1 &
background=$!
trap 'kill -- -"$background" 2>/dev/null || true' EXIT

step "unit and integration tests (release; the ASan and fuzz builds compile meanwhile at nice 19)"
if [ "$unit_only" = 1 ]; then
  ctest --preset ci -L unit -j2
else
  ctest --preset ci -j2  # unit tests two at a time; integration tests are RUN_SERIAL (one cluster)
fi

step "waiting for the AddressSanitizer/UBSan and fuzz builds"
# Nothing else of ours runs now: back to normal priority, or on a machine kept busy by other work
# at nice 0 a nice-19 build would get almost no CPU (CFS weights 15 against 1024) and stall CI.
renice -n 0 -g "$background" >/dev/null 2>&1 || true
if ! wait "$background"; then
  tail -40 "$background_log"
  echo "run-tests.sh: the ASan/UBSan or fuzz build failed (whole log: $background_log)" >&2
  exit 1
fi

step "unit tests under ASan/UBSan"
ctest --preset ci-asan -L unit -j2

step "fuzzing every parser of outside input (libFuzzer, ${FUZZ_SECONDS:-6} s per target)"
scripts/fuzz.sh "${FUZZ_SECONDS:-6}"

step "done"
