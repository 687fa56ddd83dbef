#!/usr/bin/env bash
# Direct reads on one host, on against off: the host backend's 2-rank all_gather, all_reduce and
# reduce_scatter with the default (peers read a rank's allocated buffers in place) and with
# GPUDIRECT_COMM_DIRECT_READS=0 (everything through the staging slots), interleaved round by round.
# Prints the median out-of-place time per call of each size and the ratio off/on.
#   perf/direct_reads.sh [BUILD_DIR] [ROUNDS]      (defaults: build/release, 3)
# Run it on an otherwise idle machine: it measures time.
set -euo pipefail
build=${1:-build/release}
rounds=${2:-3}
launch=$build/launcher/gpudirect-launch
[ -x "$launch" ] || { echo "direct_reads.sh: no $launch (build first: cmake --build --preset release)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# collective, first size, last size, iterations
cases=("all_gather 1M 4M 100" "all_reduce 1M 1M 100" "all_reduce 64M 256M 10" "reduce_scatter 1M 1M 100")

for round in $(seq 1 "$rounds"); do
  for c in "${cases[@]}"; do
    read -r coll first last iters <<<"$c"
    for setting in on off; do
      env_value=1; [ "$setting" = off ] && env_value=0
      echo "round $round/$rounds: $coll $first-$last, direct reads $setting" >&2
      GPUDIRECT_COMM_DIRECT_READS=$env_value "$launch" --np 2 bench "$coll" -b "$first" -e "$last" -f 4 \
        -n "$iters" -w 5 -J "$work/$coll-$first-$setting-$round.json" >/dev/null
    done
  done
done

python3 - "$work" <<'PY'
import glob, json, os, statistics, sys
times = {}  # (collective, size, setting) -> [time_us per round]
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    setting = path.rsplit("-", 2)[1]
    run = json.load(open(path))
    for row in run["rows"]:
        times.setdefault((run["collective"], row["size"], setting), []).append(row["out_of_place"]["time_us"])
def size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
print("| collective (2 ranks) | size | direct reads on, us | off, us | off / on |")
print("| --- | ---: | ---: | ---: | ---: |")
for (coll, nbytes, setting) in sorted(k for k in times if k[2] == "on"):
    on = statistics.median(times[(coll, nbytes, "on")])
    off = statistics.median(times[(coll, nbytes, "off")])
    print(f"| {coll} | {size(nbytes)} | {on:.1f} | {off:.1f} | {off / on:.2f} |")
PY
