#!/usr/bin/env python3
"""A user's own PyTorch DistributedDataParallel program, written the ordinary way (nothing of ours
imported), for the integration tests that run it under srun --gpu-direct: directly with ',torch',
through `gpudirect-launch exec`, and under torchrun.

init_process_group("gloo", init_method="env://") reads RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT from the environment; Gloo picks its interface from GLOO_SOCKET_IFNAME. Each rank trains
a small float64 MLP on its shard of a global batch for --steps SGD steps and prints one JSON line:
the mean loss over the global batch per step, a digest and the values of its parameters, its CPU
affinity, the variables the plugin set, and the addresses of its established TCP connections
(Gloo's pairs: each rank listens on its GLOO_SOCKET_IFNAME address and its peers connect to it
there), on stdout or into --report-dir. --single runs one process on the whole batch: the reference.
"""
import argparse
import fcntl
import hashlib
import json
import os
import socket
import struct

import torch
import torch.distributed as dist
import torch.nn as nn


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).double()


def global_batch(step, size):
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(size, 8, generator=g, dtype=torch.float64)
    return x, torch.sin(x.sum(dim=1, keepdim=True))


def interface_address(name):
    """IPv4 address of a network interface (SIOCGIFADDR), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
        except OSError:
            return None
    return socket.inet_ntoa(packed[20:24])


def established_connections(exclude_port):
    """[local address, remote address] of this process's established IPv4 TCP connections, except
    those of the rendezvous store (exclude_port at either end)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])

    def address(text):
        ip, port = text.split(":")
        return socket.inet_ntoa(struct.pack("<I", int(ip, 16))), int(port, 16)

    connections = []
    with open("/proc/self/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[3] != "01" or fields[9] not in inodes:  # 01: ESTABLISHED
                continue
            (local_ip, local_port), (remote_ip, remote_port) = address(fields[1]), address(fields[2])
            if exclude_port not in (local_port, remote_port):
                connections.append([local_ip, remote_ip])
    return sorted(connections)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--global-batch", type=int, default=16)
    p.add_argument("--single", action="store_true", help="one process, the whole batch (the reference)")
    p.add_argument("--report-dir", help="write the JSON line to DIR/rank<RANK>.json instead of stdout")
    a = p.parse_args()

    if a.single:
        rank, world = 0, 1
    else:
        dist.init_process_group("gloo", init_method="env://")
        rank, world = dist.get_rank(), dist.get_world_size()
    if a.global_batch % world:
        raise SystemExit(f"torch_ddp: --global-batch {a.global_batch} is not a multiple of {world} ranks")
    net = model()
    trained = net if a.single else nn.parallel.DistributedDataParallel(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    per_rank = a.global_batch // world
    losses = []
    for step in range(a.steps):
        x, y = global_batch(step, a.global_batch)
        x, y = x[rank * per_rank:(rank + 1) * per_rank], y[rank * per_rank:(rank + 1) * per_rank]
        loss = nn.functional.mse_loss(trained(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean = loss.detach().clone()
        if not a.single:
            dist.all_reduce(mean)
            mean /= world
        losses.append(mean.item())
    params = torch.cat([t.detach().flatten() for t in net.parameters()])
    nics = os.environ.get("GLOO_SOCKET_IFNAME", "")
    report = {
        "rank": rank,
        "world": world,
        "local_rank": int(os.environ.get("LOCAL_RANK", "0")),
        "host": socket.gethostname(),
        "losses": losses,
        "digest": hashlib.sha256(params.numpy().tobytes()).hexdigest(),
        "params": params.tolist(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "env": {k: os.environ.get(k) for k in ("GPUDIRECT_CPUS", "GPUDIRECT_NICS", "GPUDIRECT_GPUS", "GLOO_SOCKET_IFNAME",
                                               "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE", "CUDA_VISIBLE_DEVICES")},
        "nic_addresses": sorted(filter(None, (interface_address(n) for n in nics.split(",") if n))),
        "gloo_connections": [] if a.single else established_connections(int(os.environ["MASTER_PORT"])),
    }
    if a.report_dir:
        with open(os.path.join(a.report_dir, f"rank{rank}.json"), "w") as f:
            f.write(json.dumps(report) + "\n")
    else:
        print(json.dumps(report), flush=True)
    if not a.single:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
