#!/usr/bin/env python3
"""Every metric and label that the shipped dashboard and alert rules name must be one the commands
really write.

    check_metric_names.py --textfiles DIR [--dashboard FILE.json]... [--rules FILE.yml]...

DIR holds real textfiles written by `gpudirect-launch bench/train/health --metrics-file` (the
scrape test passes the directory node_exporter served). From every PromQL expression (a dashboard
target's `expr`, a rule's `expr`) the metric names are taken with their label matchers, and from
`by`/`without`/`on`/`ignoring`/`group_left`/`group_right` the label names; alert annotations'
`$labels.X` too. A metric name that no textfile has, a matcher's label that the metric never
carries, or a grouping label that none of the expression's metrics carries is an error (instance
and job are added by the scrape). Exit 0 when everything is known, 1 with one line per problem.
"""
import argparse
import json
import re
import sys
from pathlib import Path

import yaml

SCRAPE_LABELS = {"instance", "job"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
            "group_right", "inf", "nan"}
LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "avg", "count", "min", "max", "stddev", "stdvar", "topk", "bottomk", "quantile",
                "count_values", "group", "limitk", "limit_ratio"}

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<variable>\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<duration>[0-9]+(?:ms|[smhdwy])(?:[0-9]+(?:ms|[smhdwy]))*(?![A-Za-z0-9_:]))
  | (?P<number>0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=(){}\[\],@])
""", re.VERBOSE)


def tokens(expr):
    at = 0
    out = []
    while at < len(expr):
        m = TOKEN.match(expr, at)
        if not m:
            raise ValueError(f"cannot read the expression at {expr[at:at + 20]!r}")
        at = m.end()
        kind = m.lastgroup
        if kind not in ("space", "comment"):
            out.append((kind, m.group()))
    return out


def unquote(text):
    return text[1:-1]


def references(expr):
    """(metric name -> set of matcher label names, set of grouping label names) of one expression."""
    toks = tokens(expr)
    metrics, grouping = {}, set()
    i = 0

    def matchers(i):
        """Reads a {...} selector starting at toks[i] == '{'; returns (label names, __name__, index after)."""
        labels, name = set(), None
        i += 1
        while toks[i][1] != "}":
            kind, label = toks[i]
            if kind == "op" and label == ",":
                i += 1
                continue
            if kind != "ident" or toks[i + 1][0] != "op" or toks[i + 2][0] != "string":
                raise ValueError(f"cannot read the label matcher at {label!r}")
            if label == "__name__":
                if toks[i + 1][1] != "=":
                    raise ValueError("a __name__ regular expression cannot be checked: name the metric")
                name = unquote(toks[i + 2][1])
            else:
                labels.add(label)
            i += 3
        return labels, name, i + 1

    while i < len(toks):
        kind, text = toks[i]
        following = toks[i + 1][1] if i + 1 < len(toks) else None
        if kind == "op" and text == "[":  # range or subquery: durations and Grafana variables only
            depth = 1
            while depth:
                i += 1
                depth += {"[": 1, "]": -1}.get(toks[i][1], 0)
            i += 1
        elif kind == "op" and text == "{":  # {__name__="..."} without a name in front
            labels, name, i = matchers(i)
            if name is None:
                raise ValueError("a selector without a metric name cannot be checked")
            metrics.setdefault(name, set()).update(labels)
        elif kind == "ident" and text in LABEL_LIST_KEYWORDS:
            i += 1
            if i < len(toks) and toks[i][1] == "(":
                i += 1
                while toks[i][1] != ")":
                    if toks[i][0] == "ident":
                        grouping.add(toks[i][1])
                    i += 1
                i += 1
        elif kind == "ident" and (text.lower() in KEYWORDS or following == "(" or
                                  (text in AGGREGATIONS and following in ("by", "without"))):
            i += 1  # a function, an aggregation or a keyword
        elif kind == "ident":
            labels = set()
            i += 1
            if following == "{":
                labels, name, i = matchers(i)
                if name is not None and name != text:
                    raise ValueError(f"{text} has a __name__ matcher for {name}")
            metrics.setdefault(text, set()).update(labels)
        else:
            i += 1
    return metrics, grouping


def read_textfiles(directory):
    """metric name -> set of label names, from every *.prom file in the directory."""
    written = {}
    files = sorted(Path(directory).glob("*.prom"))
    if not files:
        raise SystemExit(f"check_metric_names: no *.prom file in {directory}")
    for path in files:
        for line in path.read_text().splitlines():
            if not line or line.startswith("#"):
                continue
            m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})? \S+$", line)
            if not m:
                raise SystemExit(f"check_metric_names: {path}: cannot read the sample line {line!r}")
            labels = set(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="(?:[^"\\]|\\.)*"', m.group(3) or ""))
            written.setdefault(m.group(1), set()).update(labels)
    return written


def dashboard_expressions(path):
    board = json.loads(Path(path).read_text())
    found = []

    def walk(node, where):
        if isinstance(node, dict):
            title = node.get("title", where) if "targets" in node or "panels" in node else where
            for target in node.get("targets", []):
                if target.get("expr"):
                    found.append((f"{path}: panel '{title}' ({target.get('refId', '?')})", target["expr"], set()))
            for key, value in node.items():
                if key != "targets":
                    walk(value, title)
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    walk(board.get("panels", []), path)
    if not found:
        raise SystemExit(f"check_metric_names: {path} has no panel with a PromQL expression")
    return found


def rule_expressions(path):
    found = []
    for group in yaml.safe_load(Path(path).read_text())["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            templates = " ".join(str(v) for v in (rule.get("annotations") or {}).values())
            used = set(re.findall(r"\$labels\.([A-Za-z_][A-Za-z0-9_]*)", templates))
            found.append((f"{path}: rule {name}", rule["expr"], used))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--textfiles", required=True, help="directory of real *.prom files the commands wrote")
    parser.add_argument("--dashboard", action="append", default=[], help="Grafana dashboard JSON")
    parser.add_argument("--rules", action="append", default=[], help="Prometheus rule file")
    args = parser.parse_args()

    written = read_textfiles(args.textfiles)
    expressions = [e for path in args.dashboard for e in dashboard_expressions(path)]
    expressions += [e for path in args.rules for e in rule_expressions(path)]
    problems, names = [], set()
    for where, expr, template_labels in expressions:
        try:
            metrics, grouping = references(expr)
        except (ValueError, IndexError) as e:
            problems.append(f"{where}: {e} in: {expr}")
            continue
        if not metrics:
            problems.append(f"{where}: names no metric: {expr}")
        known_labels = set(SCRAPE_LABELS)
        for name, labels in sorted(metrics.items()):
            names.add(name)
            if name not in written:
                problems.append(f"{where}: metric {name} is not written by any command (not in {args.textfiles})")
                continue
            known_labels |= written[name]
            for label in sorted(labels - written[name] - SCRAPE_LABELS):
                problems.append(f"{where}: {name} has no label {label} (it has: {', '.join(sorted(written[name])) or 'none'})")
        if all(name in written for name in metrics):
            for label in sorted((grouping | template_labels) - known_labels):
                problems.append(f"{where}: label {label} is on none of {', '.join(sorted(metrics))}")
    for line in problems:
        print(f"FAIL: {line}")
    print(f"check_metric_names: {len(expressions)} expressions, {len(names)} metric names "
          f"({', '.join(sorted(names))}), {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
