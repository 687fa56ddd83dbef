#!/usr/bin/env bash
# ctest driver: dump one forward/backward of the CPU model, then compare it with PyTorch.
# Exits 77 (ctest: skipped) with a message when no python3 here can import torch.
# Usage: check_gradients.sh PATH/TO/train_dump_reference [preset]
set -euo pipefail
dump=$1
preset=${2:-tiny}
here=$(cd "$(dirname "$0")" && pwd)
python=""
# Debian's python3-torch is for /usr/bin/python3; a pyenv or venv python3 on PATH may lack it.
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import torch" 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "check_gradients: SKIPPED: no python3 with torch (install Debian's python3-torch: scripts/install-deps.sh)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$dump" "$out" "$preset"
"$python" "$here/check_gradients.py" "$out"
