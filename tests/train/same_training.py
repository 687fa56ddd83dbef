#!/usr/bin/env python3
"""Two `gpudirect-launch train` runs trained alike: the data-parallel tests' one comparison.

  same_training.py REFERENCE.ckpt OTHER.ckpt [REFERENCE.jsonl OTHER.jsonl]

Parameters at the end: every element within 1e-6 except a few (Adam divides by sqrt(v), so an
element whose gradient is all rounding noise may move by up to lr either way); a wrong average or a
missing bucket moves thousands by about lr. Clipping and AdamW hide a uniform gradient scale (a sum
where an average belongs), so with the JSON lines every step's loss and gradient norm must agree too
(relative 1e-4). Prints one summary line; exits 1 when the runs differ.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_checkpoint import read_checkpoint  # noqa: E402


def steps(path):
    return [d for d in map(json.loads, open(path)) if d.get("type") == "step"]


def main(argv):
    if len(argv) not in (3, 5):
        print(__doc__, file=sys.stderr)
        return 6
    _, a, _, _ = read_checkpoint(argv[1])
    _, b, _, _ = read_checkpoint(argv[2])
    d = [abs(x - y) for x, y in zip(a, b)]
    loose = sum(1 for x in d if x > 1e-6)
    ok = len(a) == len(b) and max(d) < 1e-4 and loose <= len(d) // 1000
    line = f"parameters: max |difference| {max(d):.2e}, {loose} of {len(d)} over 1e-6"
    if len(argv) == 5:
        ref, other = steps(argv[3]), steps(argv[4])
        worst = {"loss": 0.0, "grad_norm": 0.0}
        for r, o in zip(ref, other):
            for key in worst:
                worst[key] = max(worst[key], abs(r[key] - o[key]) / max(abs(r[key]), 1e-12))
        ok = ok and len(ref) == len(other) > 0 and all(w < 1e-4 for w in worst.values())
        line += (f"; {len(other)} of {len(ref)} steps, loss and gradient norm per step within relative "
                 f"{worst['loss']:.1e} and {worst['grad_norm']:.1e}")
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
