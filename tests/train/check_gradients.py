#!/usr/bin/env python3
"""Compares the CPU model's loss and every parameter gradient with PyTorch's on the same weights and
batch. PyTorch computes in float64 from our fp32 weights, so the only error left is our fp32
rounding. Per tensor: max |ours - torch| and that divided by max |torch| (the tensor's scale).
Usage: check_gradients.py REFERENCE_DIR [--rtol 1e-4]. Exit 0 when all match, 1 otherwise."""
import argparse
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from torch_gpt import GPT, gather_flat, load_flat, read_reference  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("reference_dir")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()

    meta, params, grads, inputs, targets = read_reference(args.reference_dir)
    tensors = meta["tensors"]
    model = GPT.from_config(meta["config"]).double()
    load_flat(model, tensors, params)
    loss = model(inputs, targets)
    loss.backward()
    reference = gather_flat(model, tensors)

    failures = 0
    loss_error = abs(meta["loss"] - loss.item()) / abs(loss.item())
    status = "ok" if loss_error <= args.rtol else "MISMATCH"
    failures += status != "ok"
    print(f"check_gradients: loss ours {meta['loss']:.7f} torch(fp64) {loss.item():.7f} rel {loss_error:.2e} {status}")
    print(f"{'tensor':<16} {'max|torch|':>11} {'max abs err':>12} {'rel err':>9}")
    worst = 0.0
    for t in tensors:
        ours = grads[t["offset"]:t["offset"] + t["count"]].double()
        ref = reference[t["offset"]:t["offset"] + t["count"]]
        scale = ref.abs().max().item()
        abs_err = (ours - ref).abs().max().item()
        rel = abs_err / scale if scale > 0 else abs_err
        worst = max(worst, rel)
        bad = rel > args.rtol or not torch.isfinite(ours).all()
        failures += bad
        print(f"{t['name']:<16} {scale:11.3e} {abs_err:12.3e} {rel:9.2e}{'  MISMATCH' if bad else ''}")
    print(f"check_gradients: {len(tensors)} gradient tensors, worst rel err {worst:.2e} (tolerance {args.rtol:g}): "
          + ("all match" if failures == 0 else f"{failures} mismatch(es)"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
