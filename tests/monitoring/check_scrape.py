#!/usr/bin/env python3
"""The checks of tests/integration/test_prometheus_scrape.sh against a running Prometheus, one
phase per subcommand; each prints PASS:/FAIL: lines (the shell test counts them).

    check_scrape.py URL scraped TEXTFILE_DIR TIMEOUT_S    every sample of every *.prom file, and nothing else of gpudirect_*, is in Prometheus with its value
    check_scrape.py URL json bench|train|health FILE [JOB_ID]  Prometheus' values against the command's own JSON output
    check_scrape.py URL alerts TIMEOUT_S                  the shipped rules load, evaluate cleanly, and fire on the health sweep (not on the finished run)
    check_scrape.py URL dashboard FILE                    every dashboard query runs in Prometheus and returns series
"""
import json
import math
import re
import statistics
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through http_proxy
results = {"passed": 0, "failed": 0}


def check(ok, what, detail=""):
    if ok:
        results["passed"] += 1
        print(f"PASS: {what}")
    else:
        results["failed"] += 1
        print(f"FAIL: {what}")
        for line in str(detail).splitlines()[:20]:
            print(f"    {line}")
    return ok


def api(url, path, **params):
    query = urllib.parse.urlencode(params)
    with OPENER.open(f"{url}{path}{'?' + query if query else ''}", timeout=10) as response:
        body = json.load(response)
    if body.get("status") != "success":
        raise RuntimeError(f"{path} {params}: {body}")
    return body["data"]


def query(url, expr):
    """The instant query's result: [{"metric": {...}, "value": [time, "value"]}]."""
    return api(url, "/api/v1/query", query=expr)["result"]


def series(url, expr):
    """{(name, frozenset of labels without instance and job): value} of an instant query."""
    out = {}
    for r in query(url, expr):
        labels = dict(r["metric"])
        labels.pop("instance", None)
        labels.pop("job", None)
        out[(labels.pop("__name__", ""), frozenset(labels.items()))] = float(r["value"][1])
    return out


def read_textfiles(directory):
    samples = {}
    for path in sorted(Path(directory).glob("*.prom")):
        for line in path.read_text().splitlines():
            if not line or line.startswith("#"):
                continue
            m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
            labels = re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or "")
            samples[(m.group(1), frozenset(labels))] = float(m.group(3))
    return samples


def same(a, b, rel=1e-12):
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


def show(key):
    name, labels = key
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels)) + "}"


def phase_scraped(url, directory, timeout):
    files = read_textfiles(directory)
    check(len(files) > 0, f"the textfiles in {directory} hold {len(files)} samples")
    deadline = time.monotonic() + timeout
    start = time.monotonic()
    while True:
        got = series(url, '{__name__=~"gpudirect_.+"}')
        missing = [k for k in files if k not in got]
        wrong = [k for k in files if k in got and not (got[k] == files[k] or (math.isnan(got[k]) and math.isnan(files[k])))]
        extra = [k for k in got if k not in files]
        if not missing and not wrong and not extra:
            break
        if time.monotonic() > deadline:
            detail = [f"missing {show(k)}" for k in missing[:8]] + [f"{show(k)}: file {files[k]}, Prometheus {got[k]}" for k in wrong[:8]]
            detail += [f"in Prometheus, not in the files: {show(k)}" for k in extra[:4]]
            check(False, f"Prometheus did not show the files' {len(files)} samples within {timeout} s "
                  f"({len(missing)} missing, {len(wrong)} with other values, {len(extra)} extra)", "\n".join(detail))
            return
        time.sleep(0.25)
    names = sorted({k[0] for k in files})
    check(True, f"after {time.monotonic() - start:.1f} s Prometheus has every sample of the files with the file's value, and no other gpudirect_* "
          f"series: {len(files)} samples of {len(names)} metrics")
    errors = series(url, "node_textfile_scrape_error")
    check(errors and all(v == 0 for v in errors.values()), "node_exporter's textfile collector read the files without error", errors)
    mtimes = {dict(k[1])["file"] for k in series(url, "node_textfile_mtime_seconds")}
    expected = {p.name for p in Path(directory).glob("*.prom")}
    check(expected <= mtimes or {str(Path(directory) / f) for f in expected} <= mtimes,
          f"node_exporter reports a modification time for each file ({len(expected)})", mtimes)


def value(got, name, **labels):
    """The one series of `name` whose labels include `labels`."""
    found = [(k, v) for k, v in got.items() if k[0] == name and set(labels.items()) <= k[1]]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} series of {name} with {labels}: {[show(k) for k, _ in found]}")
    return found[0][1]


def labels_of(got, name):
    return [dict(k[1]) for k in got if k[0] == name]


def compare(what, pairs):
    """pairs: [(description, prometheus value, JSON value)]; one PASS/FAIL for the lot."""
    bad = [f"{d}: Prometheus {p!r}, JSON {j!r}" for d, p, j in pairs if not same(p, j)]
    check(not bad, f"{what}: {len(pairs)} values equal the JSON output", "\n".join(bad))


def phase_json(url, command, path, job_id=None):
    got = series(url, f'{{__name__=~"gpudirect_{command}_.+"}}')
    if job_id is not None:
        ids = {dict(k[1]).get("job_id") for k in got}
        check(ids == {job_id}, f"{command}: every series has job_id=\"{job_id}\" (SLURM_JOB_ID)", ids)
    try:
        globals()[f"json_{command}"](got, path)
    except (AssertionError, KeyError, ValueError) as e:
        check(False, f"{command}: Prometheus against the JSON output", repr(e))


def json_bench(got, path):
    run = json.loads(Path(path).read_text())
    base = {"collective": run["collective"], "backend": run["backend"]}
    if run["job_id"] is not None:
        base["job_id"] = run["job_id"]
    pairs = [("busbw", value(got, "gpudirect_bench_busbw_gbps", **base), run["avg_busbw"]),
             ("ranks", value(got, "gpudirect_bench_ranks", **base), run["ranks"]),
             ("wrong values", value(got, "gpudirect_bench_wrong_values", **base), run["wrong_total"]),
             ("min busbw", value(got, "gpudirect_bench_min_busbw_gbps", **base), run["min_busbw"]),
             ("passed", value(got, "gpudirect_bench_passed", **base), 1 if run["wrong_total"] == 0 else 0)]
    for row in run["rows"]:
        for placement in ("out_of_place", "in_place"):
            half = row[placement]
            at = dict(base, size_bytes=str(row["size"]), type=row["type"], redop=row["redop"], placement=placement)
            pairs += [(f"{row['size']} B {placement} busbw", value(got, "gpudirect_bench_size_busbw_gbps", **at), half["busbw"]),
                      (f"{row['size']} B {placement} algbw", value(got, "gpudirect_bench_size_algbw_gbps", **at), half["algbw"]),
                      (f"{row['size']} B {placement} time", value(got, "gpudirect_bench_size_time_seconds", **at), half["time_us"] * 1e-6)]
    slowest = run["slowest_rank"]
    who = dict(base, rank=str(slowest["rank"]), host=slowest["host"])
    pairs += [("slowest rank's time", value(got, "gpudirect_bench_slowest_rank_seconds", **who), slowest["time_us"] * 1e-6),
              ("median rank's time", value(got, "gpudirect_bench_median_rank_seconds", **base), slowest["median_us"] * 1e-6),
              ("straggler flag", value(got, "gpudirect_bench_straggler", **who), 1 if slowest["straggler"] else 0)]
    check(len(labels_of(got, "gpudirect_bench_size_busbw_gbps")) == 2 * len(run["rows"]),
          f"bench: one size series per row and placement ({2 * len(run['rows'])})")
    compare(f"bench ({len(run['rows'])} rows, {run['ranks']} ranks, slowest rank {slowest['rank']})", pairs)


def json_train(got, path):
    lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    start = next(line for line in lines if line["type"] == "start")
    steps = [line for line in lines if line["type"] == "step"]
    last = steps[-1]
    base = {"preset": start["preset"]}
    times = [s["step_ms"] / 1e3 for s in steps]
    who = dict(base, rank=str(last["slowest_rank"]), host=last["slowest_host"])
    pairs = [("step", value(got, "gpudirect_train_step", **base), last["step"]),
             ("planned steps", value(got, "gpudirect_train_planned_steps", **base), len(steps)),
             ("ranks", value(got, "gpudirect_train_ranks", **base), start["ranks"]),
             ("loss", value(got, "gpudirect_train_loss", **base), last["loss"]),
             ("step time", value(got, "gpudirect_train_step_seconds", **base), last["step_ms"] / 1e3),
             ("median step time", value(got, "gpudirect_train_median_step_seconds", **base), statistics.median(times[1:] if len(times) > 1 else times)),
             ("tokens/s", value(got, "gpudirect_train_tokens_per_second", **base), last["tokens_per_s"]),
             ("MFU", value(got, "gpudirect_train_mfu_ratio", **base), last["mfu"]),
             ("exposed comm", value(got, "gpudirect_train_exposed_comm_seconds", **base), last["exposed_comm_ms"] / 1e3),
             ("slowest rank's compute", value(got, "gpudirect_train_slowest_rank_compute_seconds", **who), max(last["rank_compute_ms"]) / 1e3),
             ("median compute", value(got, "gpudirect_train_median_rank_compute_seconds", **base), statistics.median(last["rank_compute_ms"]) / 1e3),
             ("straggler flag", value(got, "gpudirect_train_straggler", **who), 1 if last["straggler"] else 0)]
    named = {}
    for s in steps:
        if s["straggler"]:
            key = (str(s["straggler"]["rank"]), s["straggler"]["host"])
            named[key] = named.get(key, 0) + 1
    check(named, "train: the JSON names a straggler in some step (the test stops rank 1 now and then)",
          "no step named one: the stops fell outside rank 1's compute, or the straggler rule missed them")
    in_prometheus = {(l["rank"], l["host"]) for l in labels_of(got, "gpudirect_train_straggler_steps")}
    check(in_prometheus == set(named), f"train: straggler_steps has a series for each rank the JSON names a straggler: {sorted(named)}",
          f"Prometheus: {sorted(in_prometheus)}")
    for (rank, host), count in sorted(named.items()):
        pairs.append((f"straggler steps of rank {rank}", value(got, "gpudirect_train_straggler_steps", **base, rank=rank, host=host), count))
    compare(f"train ({len(steps)} steps, straggler steps {dict(named)})", pairs)


def json_health(got, path):
    sweep = json.loads(Path(path).read_text())
    pairs = [("threshold", value(got, "gpudirect_health_threshold_gbps"), sweep["threshold_gbps"]),
             ("bad nodes", value(got, "gpudirect_health_bad_nodes"), sum(n["verdict"] == "bad" for n in sweep["nodes"])),
             ("timestamp", value(got, "gpudirect_health_timestamp_seconds"), sweep["timestamp"])]
    for node in sweep["nodes"]:
        name = node["node"]
        pairs += [(f"{name} passed ({node['verdict']})", value(got, "gpudirect_health_node_passed", node=name, verdict=node["verdict"]),
                   1 if node["verdict"] == "good" else 0),
                  (f"{name} pairs", value(got, "gpudirect_health_node_pairs", node=name), len(node["pairs"]))]
        measured = [p["busbw"] for p in node["pairs"] if "busbw" in p and p.get("outcome", "measured") == "measured"]
        if measured:
            pairs.append((f"{name} busbw", value(got, "gpudirect_health_node_busbw_gbps", node=name), max(measured)))
    compare(f"health ({len(sweep['nodes'])} nodes, verdicts {[n['verdict'] for n in sweep['nodes']]})", pairs)


def json_supervise(got, path):
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    goodput = [d for d in lines if d.get("type") == "goodput"][-1]
    pairs = [("ettr", value(got, "gpudirect_supervise_ettr_ratio"), goodput["ettr"]),
             ("wall", value(got, "gpudirect_supervise_wall_seconds"), goodput["wall_s"]),
             ("productive", value(got, "gpudirect_supervise_productive_seconds"), goodput["productive_s"]),
             ("step", value(got, "gpudirect_supervise_step"), goodput["last_step"]),
             ("attempts", value(got, "gpudirect_supervise_attempts"), goodput["attempts"]),
             ("spares left", value(got, "gpudirect_supervise_spare_nodes"), goodput["spare_nodes_left"]),
             ("rank failures", value(got, "gpudirect_supervise_faults", kind="rank failure"),
              sum(f["kind"] == "rank failure" for f in goodput["faults"]))]
    for cause, key in (("detection", "detection_s"), ("handling", "handling_s"), ("restart", "restart_s"), ("repeated_steps", "repeated_s")):
        pairs.append((f"lost to {cause}", value(got, "gpudirect_supervise_lost_seconds", cause=cause), sum(f[key] for f in goodput["faults"])))
    compare(f"supervise ({goodput['attempts']} attempts, ETTR {goodput['ettr']:.3f})", pairs)


def phase_alerts(url, timeout):
    groups = api(url, "/api/v1/rules")["groups"]
    rules = [r for g in groups for r in g["rules"]]
    check(len(rules) == 8 and all(r["health"] == "ok" for r in rules),
          f"Prometheus loaded the {len(rules)} shipped rules and evaluates them without error",
          [(r["name"], r["health"], r.get("lastError")) for r in rules])
    sweep_nodes = {dict(k[1])["node"] for k in series(url, "gpudirect_health_node_busbw_gbps")}
    deadline = time.monotonic() + timeout
    while True:
        firing = {}
        for alert in api(url, "/api/v1/alerts")["alerts"]:
            if alert["state"] == "firing":
                firing.setdefault(alert["labels"]["alertname"], set()).add(alert["labels"].get("node", alert["labels"].get("instance")))
        if (firing.get("GpudirectNodeAllGatherBelowThreshold") == sweep_nodes and firing.get("GpudirectHealthNodeFailed") == sweep_nodes
                and firing.get("GpudirectNodeGpuHardwareFault") == {"scrape-node"}):
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.25)
    check(firing.get("GpudirectNodeAllGatherBelowThreshold") == sweep_nodes,
          f"GpudirectNodeAllGatherBelowThreshold fires for the swept nodes {sorted(sweep_nodes)} (far under a3-highgpu-8g's 60 GB/s)", firing)
    check(firing.get("GpudirectHealthNodeFailed") == sweep_nodes, "GpudirectHealthNodeFailed fires for the suspect nodes", firing)
    check(firing.get("GpudirectNodeCheckFailed") == {"scrape-node"} and firing.get("GpudirectNodeGpuHardwareFault") == {"scrape-node"},
          "GpudirectNodeCheckFailed and GpudirectNodeGpuHardwareFault fire for the node check-node failed on its GPU's ECC errors", firing)
    check("GpudirectTrainStalled" not in firing, "GpudirectTrainStalled does not fire for the finished training run", firing)
    check("GpudirectSupervisedRunOutOfSpares" not in firing,
          "GpudirectSupervisedRunOutOfSpares does not fire for the supervised run that finished on its last spare", firing)


def phase_dashboard(url, path):
    board = json.loads(Path(path).read_text())
    grafana = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h"}
    bad, count = [], 0
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, replacement in grafana.items():
                expr = expr.replace(variable, replacement)
            count += 1
            try:
                result = query(url, expr)
                if not result:
                    bad.append(f"'{panel['title']}' {target['refId']}: no series: {expr}")
            except Exception as e:  # an HTTP 400 names the PromQL error
                detail = e.read().decode() if hasattr(e, "read") else str(e)
                bad.append(f"'{panel['title']}' {target['refId']}: {detail}")
    check(count > 0 and not bad, f"every dashboard query ({count}) runs in Prometheus and returns series from the commands' files", "\n".join(bad))


def main():
    url, phase, *args = sys.argv[1:]
    if phase == "scraped":
        phase_scraped(url, args[0], float(args[1]))
    elif phase == "json":
        phase_json(url, *args)
    elif phase == "alerts":
        phase_alerts(url, float(args[0]))
    elif phase == "dashboard":
        phase_dashboard(url, args[0])
    else:
        raise SystemExit(f"unknown phase {phase}")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
