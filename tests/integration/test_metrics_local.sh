#!/usr/bin/env bash
# The Prometheus metrics files of bench and train (--metrics-file), from real --np runs (no Slurm
# needed): promtool (Debian's prometheus package) accepts them with no lint complaint, they hold
# the documented gpudirect_* names with the run's values, they are readable by node_exporter's user
# and leave no temporary file; the --json outputs carry per-rank times and the straggler fields;
# an unwritable --metrics-file fails before the run.
set -uo pipefail
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${GPUDIRECT_BUILD_DIR:-$SRC/build/release}
LAUNCH=$BUILD/launcher/gpudirect-launch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && tail -n 15 "$2" | sed 's/^/    /'; }

if ! command -v promtool >/dev/null; then
  echo "FAIL: promtool not found: install Debian's prometheus package (scripts/install-deps.sh does)"
  exit 1
fi
# promtool prints lint problems (no HELP, a counter without _total, ...) and exits non-zero on them.
promtool_ok() {  # file log
  promtool check metrics <"$1" >"$2" 2>&1 && [ ! -s "$2" ]
}
textfiles=$work/textfile
mkdir "$textfiles"

# bench: 3 ranks, three sizes.
if "$LAUNCH" --np 3 --timeout 60 bench all_gather -b 1K -e 64K -f 8 -n 3 -w 1 -J "$work/bench.json" \
     --metrics-file "$textfiles/gpudirect_bench.prom" >"$work/bench.log" 2>&1; then
  prom=$textfiles/gpudirect_bench.prom
  promtool_ok "$prom" "$work/promtool-bench.log" && pass "promtool accepts bench's metrics file" || fail "promtool on bench's file" "$work/promtool-bench.log"
  python3 - "$prom" "$work/bench.json" "$work/bench.log" >"$work/bench-check.log" 2>&1 <<'PY' && pass "bench's metrics file and JSON hold the run's values" || fail "bench's metrics file / JSON" "$work/bench-check.log"
import json, re, sys
samples = {}
for line in open(sys.argv[1]):
    if line.startswith("#"): continue
    m = re.match(r'(\w+)(\{.*\})? (\S+)$', line.strip())
    samples.setdefault(m.group(1), []).append((m.group(2) or "", float(m.group(3))))
run = json.load(open(sys.argv[2]))
printed = float(re.search(r"Avg bus bandwidth\s*:\s*(\S+)", open(sys.argv[3]).read()).group(1))
(labels, busbw), = samples["gpudirect_bench_busbw_gbps"]
assert 'collective="all_gather"' in labels, labels
assert abs(busbw - printed) <= 1e-5 * max(printed, 1e-9), (busbw, printed)
assert abs(busbw - run["avg_busbw"]) <= 1e-9 * max(busbw, 1e-9)
assert len(samples["gpudirect_bench_size_busbw_gbps"]) == 2 * len(run["rows"]) == 6, samples["gpudirect_bench_size_busbw_gbps"]
assert samples["gpudirect_bench_ranks"][0][1] == 3 and samples["gpudirect_bench_passed"][0][1] == 1
(who, flag), = samples["gpudirect_bench_straggler"]
slowest = run["slowest_rank"]
assert f'rank="{slowest["rank"]}"' in who and f'host="{slowest["host"]}"' in who and flag == (1 if slowest["straggler"] else 0), (who, slowest)
for name in ["gpudirect_bench_slowest_rank_seconds", "gpudirect_bench_median_rank_seconds", "gpudirect_bench_timestamp_seconds",
             "gpudirect_bench_size_time_seconds", "gpudirect_bench_wrong_values"]:
    assert name in samples, name
for row in run["rows"]:
    for half in ("out_of_place", "in_place"):
        assert len(row[half]["rank_times_us"]) == 3 and "straggler" in row[half], row[half]
assert "job_id" in run
print("busbw", busbw, "slowest", slowest)
PY
  [ "$(stat -c %a "$prom")" = 644 ] && [ "$(ls -A "$textfiles")" = gpudirect_bench.prom ] \
    && pass "the file is 0644 and no temporary file is left" || fail "mode $(stat -c %a "$prom"), directory: $(ls -A "$textfiles" | tr '\n' ' ')"
else
  fail "bench --metrics-file exited $?" "$work/bench.log"
fi

# train: 2 ranks, 3 steps.
if "$LAUNCH" --np 2 --timeout 60 train --backend libfabric --preset tiny --steps 3 --threads 1 --peak-tflops 0.05 -J "$work/train.json" \
     --metrics-file "$textfiles/gpudirect_train.prom" >"$work/train.log" 2>&1; then
  prom=$textfiles/gpudirect_train.prom
  promtool_ok "$prom" "$work/promtool-train.log" && pass "promtool accepts train's metrics file" || fail "promtool on train's file" "$work/promtool-train.log"
  python3 - "$prom" "$work/train.json" >"$work/train-check.log" 2>&1 <<'PY' && pass "train's metrics file and JSON hold the run's values" || fail "train's metrics file / JSON" "$work/train-check.log"
import json, re, sys
samples = {}
for line in open(sys.argv[1]):
    if line.startswith("#"): continue
    m = re.match(r'(\w+)(\{.*\})? (\S+)$', line.strip())
    samples.setdefault(m.group(1), []).append((m.group(2) or "", float(m.group(3))))
steps = [json.loads(l) for l in open(sys.argv[2])]
steps = [s for s in steps if s["type"] == "step"]
last = steps[-1]
value = lambda name: samples[name][0][1]
assert value("gpudirect_train_step") == 3 and value("gpudirect_train_planned_steps") == 3 and value("gpudirect_train_ranks") == 2
assert value("gpudirect_train_loss") == last["loss"], (value("gpudirect_train_loss"), last["loss"])
assert abs(value("gpudirect_train_step_seconds") - last["step_ms"] / 1e3) < 1e-9
assert abs(value("gpudirect_train_mfu_ratio") - last["mfu"]) < 1e-12 and abs(value("gpudirect_train_tokens_per_second") - last["tokens_per_s"]) < 1e-6
(who, _), = samples["gpudirect_train_straggler"]
assert f'rank="{last["slowest_rank"]}"' in who and f'host="{last["slowest_host"]}"' in who, (who, last)
assert 'preset="tiny"' in who
for s in steps:
    assert len(s["rank_step_ms"]) == 2 and len(s["rank_compute_ms"]) == 2 and "straggler" in s, s
    assert all(0 <= c <= w + 1e-9 for c, w in zip(s["rank_compute_ms"], s["rank_step_ms"])), s
print("loss", last["loss"], "straggler", last["straggler"])
PY
else
  fail "train --metrics-file exited $?" "$work/train.log"
fi

# An unwritable path fails at the start (exit 6) naming it, before any step or row.
for cmd in "bench all_gather -b 1K -e 1K -n 1" "train --backend libfabric --preset tiny --steps 1 --threads 1 --peak-tflops 0.05"; do
  # shellcheck disable=SC2086
  "$LAUNCH" --np 2 --timeout 20 $cmd --metrics-file "$work/missing/x.prom" >"$work/bad.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && grep -q "metrics file $work/missing/x.prom: the directory $work/missing does not exist" "$work/bad.log" \
     && ! grep -qE "^(\[0\] )? +[0-9]+ +[0-9]+ |step +1/" "$work/bad.log"; then
    pass "${cmd%% *}: an unwritable --metrics-file fails before the run"
  else
    fail "${cmd%% *}: unwritable --metrics-file (rc $rc)" "$work/bad.log"
  fi
done

echo "test_metrics_local: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
