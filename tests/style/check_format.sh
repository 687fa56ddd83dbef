#!/usr/bin/env bash
# Every C, C++ and CUDA source in the repository is formatted as .clang-format says (clang-format 14,
# as Debian 12 ships it). Prints the files that are not; fix them with
#   git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.c' '*.h' | xargs clang-format-14 -i
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"
format=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$format" ] || { echo "check_format: clang-format-14 not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
bad=()
while IFS= read -r file; do
  "$format" --dry-run -Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.c' '*.h')
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check_format: not formatted as .clang-format says: %s\n' "${bad[@]}"
  exit 1
fi
echo "check_format: every source follows .clang-format"
