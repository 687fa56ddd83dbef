# The integration tests' pass/fail bookkeeping (sourced by lib.sh, and alone by the tests that need
# no cluster): PASS/FAIL/SKIP lines and the counts the closing "N passed, M failed" line reports.
passed=0
failed=0
skipped=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/    /' | head -20; }
skip() { skipped=$((skipped + 1)); echo "SKIP: $1"; }
# expect_eq NAME EXPECTED ACTUAL
expect_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected:
$2
actual:
$3"; fi; }
# expect_contains NAME NEEDLE HAYSTACK
expect_contains() { if grep -qF -- "$2" <<<"$3"; then pass "$1"; else fail "$1" "missing '$2' in:
$3"; fi; }
