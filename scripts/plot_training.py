#!/usr/bin/python3
"""Plots `gpudirect-launch train -J FILE` output: loss and tokens/s per step, one PNG.

Usage: scripts/plot_training.py TRAIN.jsonl [OUT.png]   (default OUT: TRAIN.png)
Needs matplotlib (Debian python3-matplotlib; scripts/install-deps.sh installs it).
"""
import json
import sys


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 6
    source = argv[1]
    target = argv[2] if len(argv) == 3 else source.rsplit(".", 1)[0] + ".png"
    steps, losses, rates = [], [], []
    try:
        with open(source) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    print(f"plot_training: {source}:{number}: not JSON ({e}); give the file that train -J wrote", file=sys.stderr)
                    return 1
                if record.get("type") == "step":
                    steps.append(record["step"])
                    losses.append(record["loss"])
                    rates.append(record["tokens_per_s"])
    except OSError as e:
        print(f"plot_training: cannot read {source}: {e.strerror}", file=sys.stderr)
        return 1
    if not steps:
        print(f"plot_training: {source} has no step records (\"type\": \"step\"); was it written by gpudirect-launch train -J?", file=sys.stderr)
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_training: needs matplotlib: apt-get install python3-matplotlib (or scripts/install-deps.sh)", file=sys.stderr)
        return 1
    figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    top.plot(steps, losses, marker=".")
    top.set_ylabel("loss")
    top.grid(True, alpha=0.3)
    bottom.plot(steps, rates, marker=".", color="tab:green")
    bottom.set_ylabel("tokens/s (all ranks)")
    bottom.set_xlabel("step")
    bottom.grid(True, alpha=0.3)
    figure.suptitle(f"gpudirect-launch train: {source}")
    figure.tight_layout()
    figure.savefig(target, dpi=100)
    print(f"plot_training: wrote {target} ({len(steps)} steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
