"""The GPT of launcher/train in PyTorch: the independent oracle for the CPU implementation.

Same maths as launcher/train/cpu (pre-LayerNorm blocks, fused q|k|v projection, causal attention,
GELU with the tanh approximation, tied output head, mean cross-entropy), written the ordinary
PyTorch way with nn.Linear ([out, in] weights) and autograd. Weights are loaded from our flat
layout (ParameterLayout order) instead of reproducing our initialisation.

Importable: the trainer's AdamW check builds its model from here.
"""
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width, eps=1e-5)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width, eps=1e-5)
        self.fc = nn.Linear(width, 4 * width)
        self.fcproj = nn.Linear(4 * width, width)

    def attention(self, x):
        B, T, C = x.shape
        hs = C // self.heads
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, hs).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, heads, width, seq_len, vocab):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(seq_len, width)
        self.h = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(width, eps=1e-5)

    @classmethod
    def from_config(cls, config):
        return cls(config["layers"], config["heads"], config["width"], config["seq_len"], config["vocab"])

    def forward(self, inputs, targets):
        """Mean cross-entropy over every token of inputs/targets ([B, T] int64)."""
        T = inputs.shape[1]
        x = self.wte(inputs) + self.wpe(torch.arange(T, device=inputs.device))
        for block in self.h:
            x = block(x)
        logits = self.lnf(x) @ self.wte.weight.t()  # tied head
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))

    def tensor(self, name):
        """Our layout name ("wte", "h.3.qkv.w", "lnf.b") -> the nn.Parameter it names."""
        if name in ("wte", "wpe"):
            return getattr(self, name).weight
        path, kind = name.rsplit(".", 1)
        module = self
        for part in path.split("."):
            module = module[int(part)] if part.isdigit() else getattr(module, part)
        return module.weight if kind == "w" else module.bias


def load_flat(model, tensors, flat):
    """Copies our flat buffer (a 1-D tensor in ParameterLayout order) into the model."""
    with torch.no_grad():
        for t in tensors:
            p = model.tensor(t["name"])
            chunk = flat[t["offset"]:t["offset"] + t["count"]]
            if list(p.shape) != list(t["shape"]):
                raise ValueError(f"torch_gpt: {t['name']} is {list(p.shape)} in PyTorch but {t['shape']} in our layout")
            p.copy_(chunk.view(p.shape).to(p.dtype))


def gather_flat(model, tensors, what="grad"):
    """Our flat layout of the model's gradients (what="grad") or weights (what="data")."""
    parts = []
    for t in tensors:
        p = model.tensor(t["name"])
        value = p.grad if what == "grad" else p.data
        parts.append(value.reshape(-1))
    return torch.cat(parts)


def read_reference(directory):
    """What train_dump_reference wrote: (meta, params, grads, inputs, targets) as tensors."""
    with open(os.path.join(directory, "reference.json")) as f:
        meta = json.load(f)
    c = meta["config"]
    shape = (c["micro_batch"], c["seq_len"])

    def raw(name, dtype):
        with open(os.path.join(directory, name), "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=dtype)

    params = raw("params.f32", torch.float32)
    grads = raw("grads.f32", torch.float32)
    inputs = raw("inputs.i32", torch.int32).view(shape).long()
    targets = raw("targets.i32", torch.int32).view(shape).long()
    return meta, params, grads, inputs, targets
