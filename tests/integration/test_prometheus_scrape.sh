#!/usr/bin/env bash
# The metrics files scraped by a real Prometheus (Debian's prometheus and prometheus-node-exporter):
# our own node_exporter (textfile collector only, on a free localhost port) serves a temporary
# directory that bench and train (--np 2, one rank stopped now and then so that train names a
# straggler) and a health sweep of the 2-node local Slurm cluster (--machine-type a3-highgpu-8g)
# write into; our own Prometheus scrapes it every second with the shipped alert rules loaded.
# Checked through Prometheus' HTTP API: every sample of every file is there with the file's value,
# and a representative set of values equals each command's JSON output; the rules evaluate without
# error, the busbw and verdict alerts fire for the swept nodes and the stall alert does not; every
# dashboard query returns series; and every metric and label the dashboard and the rules name is
# one the commands wrote (checked on a dashboard and a rule file with a misspelt name too, which
# must fail). A system node_exporter or Prometheus, if any, is neither used nor touched.
source "$(dirname "$0")/lib.sh"

started=$SECONDS
for tool in prometheus prometheus-node-exporter promtool; do
  command -v $tool >/dev/null || { echo "FAIL: $tool not found: scripts/install-deps.sh installs Debian's prometheus and prometheus-node-exporter"; exit 1; }
done
MONITORING=$SRC/monitoring
CHECKS=$SRC/tests/monitoring
work=$CLUSTER_DIR/scrape
textfiles=$work/textfile
mkdir -p "$textfiles"

daemons=()
stop_daemons() {
  local pid
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  daemons=()
}
train_pid="" rank1=""
stop_train() {  # an interrupted test: rank 1 may be stopped; the launcher passes SIGTERM to its ranks
  [ -n "$rank1" ] && kill -CONT "$rank1" 2>/dev/null
  [ -n "$train_pid" ] && kill "$train_pid" 2>/dev/null && wait "$train_pid" 2>/dev/null
}
trap 'stop_train; stop_daemons; finish' EXIT

# Counts the PASS:/FAIL: lines of a check program into this test's totals.
counted() {
  local out rc fails
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  fails=$(grep -c '^FAIL:' <<<"$out")
  passed=$((passed + $(grep -c '^PASS:' <<<"$out")))
  failed=$((failed + fails))
  if [ $rc -ne 0 ] && [ "$fails" -eq 0 ]; then failed=$((failed + 1)); echo "FAIL: ${*:2:3} ended with exit $rc"; fi
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# wait_for WHAT SECONDS PID COMMAND...: polls COMMAND until it succeeds; gives up when PID exits or time is up.
wait_for() {
  local what=$1 seconds=$2 pid=$3 deadline=$((SECONDS + $2))
  shift 3
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "FAIL: $what: the process exited"; return 1; fi
    if [ $SECONDS -ge $deadline ]; then echo "FAIL: $what: not within $seconds s"; return 1; fi
    sleep 0.2
  done
}
# No proxy: the daemons are on this machine's loopback whatever http_proxy says.
http_ok() { python3 -c 'import sys, urllib.request; urllib.request.build_opener(urllib.request.ProxyHandler({})).open(sys.argv[1], timeout=2).read()' "$1"; }
give_up() { # what log
  fail "$1" "$(tail -n 15 "$2" 2>&1)"
  summary
  exit 1
}

# node_exporter: the textfile collector only (no other collector, no exporter self-metrics).
ne_port=$(free_port)
prometheus-node-exporter --collector.disable-defaults --collector.textfile --collector.textfile.directory="$textfiles" \
  --web.disable-exporter-metrics --web.listen-address="127.0.0.1:$ne_port" >"$work/node_exporter.log" 2>&1 &
daemons+=($!)
wait_for "node_exporter on 127.0.0.1:$ne_port" 20 "${daemons[-1]}" http_ok "http://127.0.0.1:$ne_port/metrics" ||
  give_up "our node_exporter answers" "$work/node_exporter.log"
pass "our node_exporter serves $textfiles on 127.0.0.1:$ne_port"

# Prometheus: scrapes that node_exporter every second, evaluates the shipped rules every second.
prom_port=$(free_port)
PROM=http://127.0.0.1:$prom_port
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $MONITORING/prometheus/gpudirect-alerts.yml
scrape_configs:
  - job_name: gpudirect-textfiles
    static_configs:
      - targets: ['127.0.0.1:$ne_port']
EOF
promtool check config "$work/prometheus.yml" >"$work/promtool-config.log" 2>&1 || give_up "promtool accepts the test's prometheus.yml" "$work/promtool-config.log"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" --web.listen-address="127.0.0.1:$prom_port" \
  --log.level=warn >"$work/prometheus.log" 2>&1 &
daemons+=($!)
wait_for "Prometheus on 127.0.0.1:$prom_port" 30 "${daemons[-1]}" http_ok "$PROM/-/ready" || give_up "our Prometheus is ready" "$work/prometheus.log"
pass "our Prometheus is ready on 127.0.0.1:$prom_port, scraping every 1 s"

# bench and train run with SLURM_JOB_ID set, as they would inside an allocation (salloc), so their
# files carry the job_id label the dashboard and the rules use.
# bench: 2 local ranks, 3 sizes, with --min-busbw so that every bench metric is written.
if SLURM_JOB_ID=4242 "$LAUNCH" --np 2 --timeout 60 bench all_gather -b 1K -e 64K -f 8 -n 3 -w 1 --min-busbw 0.000001 -J "$work/bench.json" \
     --metrics-file "$textfiles/gpudirect_bench.prom" >"$work/bench.log" 2>&1; then
  pass "bench --metrics-file ran"
else
  fail "bench --metrics-file exited $?" "$(tail -n 15 "$work/bench.log")"
fi

# train: 2 local ranks, steps of about 10 ms. Once the first step is done (its file appears), rank 1
# is stopped 6 times for 0.2 s: a stop that falls in its compute makes it the step's straggler, so
# train writes gpudirect_train_straggler_steps.
steps=200
SLURM_JOB_ID=4242 "$LAUNCH" --np 2 --timeout 60 train --backend libfabric --preset tiny --steps $steps --threads 1 --peak-tflops 0.05 -J "$work/train.json" \
  --metrics-file "$textfiles/gpudirect_train.prom" >"$work/train.log" 2>&1 &
train_pid=$!
deadline=$((SECONDS + 30))
while kill -0 $train_pid 2>/dev/null && [ $SECONDS -lt $deadline ]; do
  for child in $(pgrep -P $train_pid); do
    grep -qx GPUDIRECT_LAUNCH_RANK=1 < <(tr '\0' '\n' <"/proc/$child/environ" 2>/dev/null) && rank1=$child
  done
  [ -n "$rank1" ] && [ -f "$textfiles/gpudirect_train.prom" ] && break
  sleep 0.05
done
stops=0
while [ -n "$rank1" ] && [ $stops -lt 6 ] && kill -STOP "$rank1" 2>/dev/null; do
  stops=$((stops + 1))
  sleep 0.2
  kill -CONT "$rank1" 2>/dev/null
  sleep 0.1
done
wait $train_pid
rc=$?
train_pid="" rank1=""
if [ $rc -eq 0 ]; then
  pass "train --metrics-file ran $steps steps (rank 1 stopped $stops times)"
else
  fail "train --metrics-file exited $rc" "$(tail -n 15 "$work/train.log")"
fi

# health: the 2-node cluster, one rank per node, tiny sizes; held to a3-highgpu-8g's 60 GB/s, which
# this machine's pairs are far under, so both nodes are suspects (exit 7) and the alerts must fire.
cluster_up
if "$LAUNCH" --timeout 20 health --nodelist 'node[1-2]' --ntasks-per-node 1 --gpus-per-task 0 -b 512K -e 512K -n 3 -w 1 \
     --machine-type a3-highgpu-8g --pair-timeout 60 --work-dir "$work/health" --json "$work/health.json" \
     --metrics-file "$textfiles/gpudirect_health.prom" >"$work/health.log" 2>&1; then
  rc=0
else
  rc=$?
fi
if [ $rc -eq 7 ] && grep -q '^gpudirect_health_node_busbw_gbps{machine_type="a3-highgpu-8g",node="node1"}' "$textfiles/gpudirect_health.prom"; then
  pass "health --machine-type a3-highgpu-8g measured node1 with node2: under 60 GB/s (exit 7), samples labelled machine_type"
else
  fail "health sweep exited $rc (expected 7) and measured the pair" "$(tail -n 8 "$work/health.log"; tail -n 8 "$work"/health/*.log)"
fi
# check-node on this machine as a node with 8 stand-in H100s, one with uncorrected ECC errors:
# fails (exit 7) with a GPU hardware finding, so its alerts must fire.
mkdir -p "$work/expectations"
printf 'gpu_count=8\ngpu_model=H100\n' >"$work/expectations/scrape-test.conf"
printf 'count 8\ngpu 2 ecc_volatile 3\n' >"$work/nvml.conf"
NVML_STANDIN_CONFIG=$work/nvml.conf "$LAUNCH" check-node --machine-type scrape-test --expectations-dir "$work/expectations" \
  --nvml-library "$BUILD/tests/libnvml_standin.so" --no-gres --node scrape-node --kernel-log /dev/null \
  --metrics-file "$textfiles/gpudirect_node_check.prom" >"$work/check-node.log" 2>&1
rc=$?
if [ $rc -eq 7 ] && grep -q '^gpudirect_node_check_passed{node="scrape-node",machine_type="scrape-test"} 0' "$textfiles/gpudirect_node_check.prom"; then
  pass "check-node --metrics-file: the node fails (exit 7) with its GPU 2's ECC errors"
else
  fail "check-node exited $rc (expected 7) and wrote its file" "$(cat "$work/check-node.log")"
fi
# supervise: the 2 nodes as 1 training node (2 ranks) and 1 spare. A training rank killed twice:
# the first time node1 passes its check (a transient fault), the second time it is drained and the
# spare trains on, so the file has a fault, a drained node and no spare left (the run finishes, so
# the out-of-spares alert must stay quiet).
salloc -N2 --ntasks-per-node=2 --no-kill "$LAUNCH" supervise --spare-nodes 1 --ntasks-per-node 2 --srun-arg=--gpus-per-task=0 --rank-timeout 10 \
  --check-timeout 30 --work-dir "$work/supervise" -J "$work/supervise.json" --metrics-file "$textfiles/gpudirect_supervise.prom" -- \
  --backend libfabric --preset tiny --steps 1500 --threads 1 --checkpoint "$work/supervise.ckpt" --checkpoint-every 100 >"$work/supervise.log" 2>&1 &
supervisor=$!
for attempt in 1 2; do
  deadline=$((SECONDS + 60))
  until [ -s "$work/supervise/attempt-$attempt.jsonl" ] || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
  sleep 1
  rank=$(pgrep -f "train --backend libfabric --preset tiny --steps 1500" | while read -r pid; do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx SLURM_PROCID=1 && echo "$pid"; done | head -1)
  [ -n "$rank" ] && kill -9 "$rank"
done
wait $supervisor
rc=$?
scontrol update nodename=node1 state=resume 2>/dev/null
if [ $rc -eq 0 ] && grep -q '^gpudirect_supervise_drained_nodes{job_id="[0-9]*",reason="unspecified"} 1' "$textfiles/gpudirect_supervise.prom"; then
  pass "supervise --metrics-file: 2 rank failures, node1 drained after its second, the spare finished the run"
else
  fail "supervise exited $rc (expected 0) and wrote its file with node1 drained" "$(grep '^gpudirect supervise' "$work/supervise.log" | tail -n 12)"
fi
ls "$textfiles"/*.prom >/dev/null 2>&1 || give_up "the commands wrote their files" "$work/bench.log"

counted python3 "$CHECKS/check_scrape.py" "$PROM" scraped "$textfiles" 30
counted python3 "$CHECKS/check_scrape.py" "$PROM" json bench "$work/bench.json" 4242
counted python3 "$CHECKS/check_scrape.py" "$PROM" json train "$work/train.json" 4242
counted python3 "$CHECKS/check_scrape.py" "$PROM" json health "$work/health.json"
counted python3 "$CHECKS/check_scrape.py" "$PROM" json supervise "$work/supervise.json"
counted python3 "$CHECKS/check_scrape.py" "$PROM" alerts 15
counted python3 "$CHECKS/check_scrape.py" "$PROM" dashboard "$MONITORING/grafana/gpudirect.json"

# Every metric and label the dashboard and the rules name, against the files the commands wrote.
names=(python3 "$CHECKS/check_metric_names.py" --textfiles "$textfiles")
if out=$("${names[@]}" --dashboard "$MONITORING/grafana/gpudirect.json" --rules "$MONITORING/prometheus/gpudirect-alerts.yml" 2>&1); then
  pass "the dashboard and the rules name only metrics and labels the commands write ($(printf '%s\n' "$out" | tail -n 1 | sed 's/^check_metric_names: //; s/ (.*//'))"
else
  fail "the dashboard and the rules name only metrics and labels the commands write" "$out"
fi
sed 's/gpudirect_train_mfu_ratio/gpudirect_train_mfu_percent/' "$MONITORING/grafana/gpudirect.json" >"$work/misspelt.json"
sed 's/machine_type="a3-megagpu-8g"/machinetype="a3-megagpu-8g"/' "$MONITORING/prometheus/gpudirect-alerts.yml" >"$work/misspelt.yml"
out=$("${names[@]}" --dashboard "$work/misspelt.json" --rules "$work/misspelt.yml" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "panel 'Train MFU' (A): metric gpudirect_train_mfu_percent is not written by any command" <<<"$out" &&
   grep -q "rule GpudirectNodeAllGatherBelowThreshold: gpudirect_health_node_busbw_gbps has no label machinetype" <<<"$out"; then
  pass "a panel naming a metric no command writes, and a rule matching a label the metric lacks, fail the check"
else
  fail "the name check on a misspelt metric and label (exit $rc)" "$out"
fi

stop_daemons
echo "     test_prometheus_scrape took $((SECONDS - started)) s"
summary
