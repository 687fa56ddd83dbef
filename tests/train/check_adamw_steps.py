#!/usr/bin/env python3
"""10 AdamW steps of `gpudirect-launch train` against PyTorch: same weights, optimizer state and
batches -> the same losses. The run starts from our checkpoint after step 1 (so the AdamW moments
are not zero), then PyTorch (float64 model, torch.optim.AdamW with decay on matrices and embeddings
only, clip_grad_norm_, our per-step learning rates from the JSON lines) runs steps 2..11 on the
same token file windows, and every loss must match ours within --rtol.
Usage: check_adamw_steps.py GPUDIRECT_LAUNCH [--rtol 1e-6]. Exit 0 when all match, 1 otherwise."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from read_checkpoint import read_checkpoint  # noqa: E402
from torch_gpt import GPT, load_flat  # noqa: E402

STEPS = 11


def layout(c):
    """Our ParameterLayout (launcher/train/model.hpp) as (name, offset, count, shape, decay)."""
    V, T, C = c["vocab"], c["seq_len"], c["width"]
    tensors, offset = [], 0

    def add(name, shape, decay):
        nonlocal offset
        count = 1
        for d in shape:
            count *= d
        tensors.append({"name": name, "offset": offset, "count": count, "shape": shape, "decay": decay})
        offset += count
    add("wte", [V, C], True)
    add("wpe", [T, C], True)
    for l in range(c["layers"]):
        p = f"h.{l}."
        for name, shape, decay in (("ln1.w", [C], False), ("ln1.b", [C], False), ("qkv.w", [3 * C, C], True), ("qkv.b", [3 * C], False),
                                   ("proj.w", [C, C], True), ("proj.b", [C], False), ("ln2.w", [C], False), ("ln2.b", [C], False),
                                   ("fc.w", [4 * C, C], True), ("fc.b", [4 * C], False), ("fcproj.w", [C, 4 * C], True),
                                   ("fcproj.b", [C], False)):
            add(p + name, shape, decay)
    add("lnf.w", [C], False)
    add("lnf.b", [C], False)
    return tensors, offset


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("launch")
    parser.add_argument("--rtol", type=float, default=1e-6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpudirect_adamw_") as work:
        return check(args, work)


def check(args, work):
    tokens = [(i * 7 + (i * i) % 11) % 512 for i in range(40000)]
    data = os.path.join(work, "tokens.u16")
    with open(data, "wb") as f:
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))
    run = [args.launch, "train", "--preset", "tiny", "--data", data, "--threads", "1", "--peak-tflops", "0.05",
           "--lr", "3e-3", "--warmup", "2", "--lr-steps", str(STEPS), "--weight-decay", "0.1", "--grad-clip", "1.0"]
    ck = os.path.join(work, "step1.ckpt")
    log = os.path.join(work, "losses.jsonl")
    for command in (run + ["--steps", "1", "--checkpoint", ck], run + ["--steps", str(STEPS), "-J", log]):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"check_adamw_steps: {' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
            return 1
    records = [json.loads(line) for line in open(log)]
    ours = {r["step"]: r for r in records if r.get("type") == "step"}

    header, params, m, v = read_checkpoint(ck)
    c = header["config"]
    tensors, total = layout(c)
    if total != header["parameters"]:
        print(f"check_adamw_steps: layout has {total} parameters, the checkpoint {header['parameters']}")
        return 1
    model = GPT.from_config(c).double()
    flat = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    load_flat(model, tensors, flat(params))
    a = header["adamw"]
    decay = [model.tensor(t["name"]) for t in tensors if t["decay"]]
    plain = [model.tensor(t["name"]) for t in tensors if not t["decay"]]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": a["weight_decay"]}, {"params": plain, "weight_decay": 0.0}],
                                  lr=1.0, betas=(a["beta1"], a["beta2"]), eps=a["epsilon"])
    m_flat, v_flat = flat(m), flat(v)
    for t in tensors:
        p = model.tensor(t["name"])
        optimizer.state[p] = {"step": torch.tensor(float(header["step"])),
                              "exp_avg": m_flat[t["offset"]:t["offset"] + t["count"]].view(p.shape).clone(),
                              "exp_avg_sq": v_flat[t["offset"]:t["offset"] + t["count"]].view(p.shape).clone()}
    B, T = c["micro_batch"], c["seq_len"]
    windows = (len(tokens) - 1) // T
    worst, failures = 0.0, 0
    print(f"{'step':>4} {'ours':>12} {'torch(fp64)':>12} {'rel err':>9}")
    for step in range(header["step"], STEPS):  # 0-based step index; our JSON numbers steps from 1
        rows = []
        for b in range(B):
            w = (step * B + b) % windows
            rows.append(tokens[w * T:w * T + T + 1])
        batch = torch.tensor(rows, dtype=torch.long)
        optimizer.zero_grad()
        loss = model(batch[:, :-1], batch[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), header["grad_clip"])
        for group in optimizer.param_groups:
            group["lr"] = ours[step + 1]["lr"]
        optimizer.step()
        rel = abs(ours[step + 1]["loss"] - loss.item()) / abs(loss.item())
        worst = max(worst, rel)
        failures += rel > args.rtol
        print(f"{step + 1:4d} {ours[step + 1]['loss']:12.7f} {loss.item():12.7f} {rel:9.2e}{'  MISMATCH' if rel > args.rtol else ''}")
    print(f"check_adamw_steps: {STEPS - header['step']} AdamW steps, worst loss rel err {worst:.2e} (tolerance {args.rtol:g}): "
          + ("all match" if failures == 0 else f"{failures} mismatch(es)"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
