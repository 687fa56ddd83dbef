#!/usr/bin/env python3
"""PyTorch's column of the GPU kit's speed table: the same GPT as ours (tests/train/torch_gpt.py:
pre-LayerNorm blocks, fused q|k|v, materialised causal attention, GELU-tanh, tied head) trained on
one GPU in eager mode with bf16 autocast, fp32 master weights, fused AdamW (lr 6e-4, weight decay
0.1) and gradient clipping at 1.0, on consecutive windows of an llm.c .bin v1 token file.

Prints one line per step, "torch step N/S | loss L | X ms" (the step's wall time after
torch.cuda.synchronize), then "torch: ..." with the version, the device and the peak memory
PyTorch's allocator saw. The kit's run.sh takes the median of the steps after the first, as for
every other column. Exit 3 on running out of GPU memory (named), 1 on any other failure.

Usage: torch_speed.py --data FILE [--batch 16] [--seq-len 1024] [--steps 20]
       [--layers 12 --heads 12 --width 768 --vocab 50257]"""
import argparse
import os
import struct
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "train"))
from torch_gpt import GPT  # noqa: E402

LLMC_MAGIC, LLMC_VERSION = 20240520, 1


def read_tokens(path):
    """llm.c's .bin v1: 256 int32 header (magic, version, token count, zeros), then uint16 tokens."""
    with open(path, "rb") as f:
        header = struct.unpack("<256i", f.read(1024))
        if header[0] != LLMC_MAGIC or header[1] != LLMC_VERSION:
            sys.exit(f"torch_speed: {path} is not an llm.c .bin v1 token file (magic {header[0]}, version {header[1]})")
        data = f.read()
    if len(data) != 2 * header[2]:
        sys.exit(f"torch_speed: {path} announces {header[2]} tokens but holds {len(data) // 2}")
    return torch.frombuffer(bytearray(data), dtype=torch.int16).to(torch.int64) & 0xFFFF


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="llm.c .bin v1 token file")
    for name, default in (("layers", 12), ("heads", 12), ("width", 768), ("seq-len", 1024), ("vocab", 50257),
                          ("batch", 16), ("steps", 20)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_speed: no CUDA device: torch.cuda.is_available() is False "
                 f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
    device = torch.device("cuda")
    tokens = read_tokens(a.data)
    window = a.batch * a.seq_len
    if tokens.numel() < window + 1:
        sys.exit(f"torch_speed: {a.data} holds {tokens.numel()} tokens, fewer than one batch ({window + 1})")
    if int(tokens.max()) >= a.vocab:
        sys.exit(f"torch_speed: {a.data} has token {int(tokens.max())}, outside the vocabulary of {a.vocab}")
    tokens = tokens.to(device)
    torch.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    model = GPT(a.layers, a.heads, a.width, a.seq_len, a.vocab).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1, fused=True)
    print(f"torch: {sum(q.numel() for q in model.parameters()):,} parameters, micro-batch {a.batch} x T {a.seq_len}, "
          f"{a.steps} steps, bf16 autocast, eager", flush=True)
    try:
        for step in range(a.steps):
            start = (step * window) % (tokens.numel() - window - 1)
            x = tokens[start:start + window].view(a.batch, a.seq_len)
            y = tokens[start + 1:start + window + 1].view(a.batch, a.seq_len)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
            optimizer.step()
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t0) * 1e3
            print(f"torch step {step + 1}/{a.steps} | loss {loss.item():.4f} | {ms:.1f} ms", flush=True)
    except torch.cuda.OutOfMemoryError as e:
        print(f"torch: out of GPU memory at micro-batch {a.batch} x T {a.seq_len}: {str(e).splitlines()[0]}", flush=True)
        sys.exit(3)
    gib = 1 << 30
    print(f"torch: version {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name()}, "
          f"peak memory allocated {torch.cuda.max_memory_allocated() / gib:.2f} GiB, "
          f"reserved {torch.cuda.max_memory_reserved() / gib:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
