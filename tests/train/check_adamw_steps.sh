#!/usr/bin/env bash
# ctest driver: 10 AdamW steps of gpudirect-launch train against PyTorch (check_adamw_steps.py).
# Exits 77 (ctest: skipped) with a message when no python3 here can import torch.
# Usage: check_adamw_steps.sh PATH/TO/gpudirect-launch
set -euo pipefail
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
  echo "check_adamw_steps: SKIPPED: no python3 with torch (install Debian's python3-torch: scripts/install-deps.sh)"
  exit 77
fi
"$python" "$here/check_adamw_steps.py" "$1"
