#!/usr/bin/env python3
"""Forward + backward step time of the same GPT in PyTorch on the CPU (fp32), the peer of
perf/train_cpu_step. Model: tests/train/torch_gpt.py. Prints
"torch ms_median=... ms_min=... cpu_ms_median=... threads=N"."""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train"))
from torch_gpt import GPT  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    for name, default in (("layers", 2), ("heads", 4), ("width", 64), ("seq-len", 64), ("vocab", 512), ("batch", 4),
                          ("threads", 1), ("steps", 10), ("warmup", 2)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = GPT(a.layers, a.heads, a.width, a.seq_len, a.vocab)
    inputs = torch.randint(0, a.vocab, (a.batch, a.seq_len))
    targets = torch.randint(0, a.vocab, (a.batch, a.seq_len))
    times, cpu_times = [], []
    for step in range(a.warmup + a.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        model.zero_grad(set_to_none=True)
        loss = model(inputs, targets)
        loss.backward()
        dt = (time.perf_counter() - t0) * 1e3
        cpu = (time.process_time() - c0) * 1e3
        if step >= a.warmup:
            times.append(dt)
            cpu_times.append(cpu)
    times.sort()
    cpu_times.sort()
    print(f"torch ms_median={times[len(times) // 2]:.2f} ms_min={times[0]:.2f} cpu_ms_median={cpu_times[len(cpu_times) // 2]:.2f} threads={torch.get_num_threads()} "
          f"loss={loss.item():.4f} version={torch.__version__}")


if __name__ == "__main__":
    main()
