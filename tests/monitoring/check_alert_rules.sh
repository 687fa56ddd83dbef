#!/usr/bin/env bash
# The shipped alerting rules (monitoring/prometheus/gpudirect-alerts.yml): promtool accepts them
# (`check rules`: YAML, PromQL, templates, no lint complaint) and they fire, and stay silent, as
# tests/monitoring/gpudirect-alerts.test.yml says on recorded series (`test rules`).
set -uo pipefail
SRC=${GPUDIRECT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RULES=$SRC/monitoring/prometheus/gpudirect-alerts.yml
if ! command -v promtool >/dev/null; then
  echo "FAIL: promtool not found: install Debian's prometheus package (scripts/install-deps.sh does)"
  exit 1
fi
passed=0 failed=0
log=$(promtool check rules "$RULES" 2>&1)
if [ $? -eq 0 ] && ! grep -qiE 'warning|lint' <<<"$log"; then
  passed=$((passed + 1)); echo "PASS: promtool check rules: $(grep -o 'SUCCESS.*' <<<"$log")"
else
  failed=$((failed + 1)); echo "FAIL: promtool check rules"; printf '%s\n' "$log" | sed 's/^/    /'
fi
log=$(promtool test rules "$SRC/tests/monitoring/gpudirect-alerts.test.yml" 2>&1)
if [ $? -eq 0 ]; then
  passed=$((passed + 1)); echo "PASS: promtool test rules: every alert fires where expected and nowhere else"
else
  failed=$((failed + 1)); echo "FAIL: promtool test rules"; printf '%s\n' "$log" | sed 's/^/    /'
fi
echo "check_alert_rules: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
