#!/usr/bin/python3
"""Regenerates the PyTorch reference tensors the engine tests compare against.

Run with Debian's python3-torch (1.13):  /usr/bin/python3 tests/golden/make_golden.py
Each case becomes a folder with the inputs (query/key/value.npy, W_*.npy, mask.npy), a
case.json describing the config, and one <step>.npy per trace step, computed by plain
PyTorch ops in the same order as the engine's named steps. The tests never import torch.
"""
import json
import math
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def lengths_mask(lengths, t, left):
    """(B, t) bool: True where position p is padding."""
    pos = torch.arange(t)[None, :]
    lens = torch.tensor(lengths)[:, None]
    return pos < (t - lens) if left else pos >= lens


def build_mask(b, tq, tk, causal, key_lengths, query_lengths, left):
    mask = torch.zeros(b, 1, tq, tk, dtype=torch.bool)
    if causal:
        mask |= torch.triu(torch.ones(tq, tk, dtype=torch.bool), diagonal=1)[None, None]
    if key_lengths:
        mask |= lengths_mask(key_lengths, tk, left)[:, None, None, :]
    if query_lengths:
        mask |= lengths_mask(query_lengths, tq, left)[:, None, :, None]
    return mask


def save(folder, name, tensor):
    np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(tensor.detach().numpy()))


def make_case(name, b, tq, tk, d, h, bias=True, cross=False, causal=False,
              key_lengths=None, query_lengths=None, left=False, seed=0):
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    linears = {n: torch.nn.Linear(d, d, bias=bias) for n in ("W_Q", "W_K", "W_V", "W_O")}
    with torch.no_grad():
        for n, lin in linears.items():
            lin.weight.copy_(torch.rand(d, d, generator=g) * 2 / math.sqrt(d) - 1 / math.sqrt(d))
            if bias:
                lin.bias.copy_(torch.rand(d, generator=g) * 0.2 - 0.1)
            save(folder, n + ".weight", lin.weight)
            if bias:
                save(folder, n + ".bias", lin.bias)
    query = torch.randn(b, tq, d, generator=g)
    key = torch.randn(b, tk, d, generator=g) if cross else query
    value = torch.randn(b, tk, d, generator=g) if cross else query
    dk = d // h
    mask = build_mask(b, tq, tk, causal, key_lengths, query_lengths, left)
    masked = causal or key_lengths or query_lengths
    with torch.no_grad():
        steps = {"query": query, "key": key, "value": value}
        steps["q_proj"] = linears["W_Q"](query)
        steps["k_proj"] = linears["W_K"](key)
        steps["v_proj"] = linears["W_V"](value)
        q = steps["q_proj"].view(b, tq, h, dk).transpose(1, 2)
        k = steps["k_proj"].view(b, tk, h, dk).transpose(1, 2)
        v = steps["v_proj"].view(b, tk, h, dk).transpose(1, 2)
        steps["q_heads"], steps["k_heads"], steps["v_heads"] = q, k, v
        steps["scores"] = q @ k.transpose(-2, -1)
        steps["scores_scaled"] = steps["scores"] / math.sqrt(dk)
        logits = steps["scores_scaled"]
        if masked:
            steps["mask"] = mask
            steps["scores_masked"] = logits.masked_fill(mask, float("-inf"))
            logits = steps["scores_masked"]
        steps["alpha"] = torch.softmax(logits, dim=-1)
        steps["ctx_heads"] = steps["alpha"] @ v
        steps["ctx_contiguous"] = steps["ctx_heads"].transpose(1, 2).contiguous()
        steps["ctx_concat"] = steps["ctx_contiguous"].view(b, tq, d)
        steps["out"] = linears["W_O"](steps["ctx_concat"])
    for step, tensor in steps.items():
        save(folder, step, tensor)
    spec = []
    if causal:
        spec.append("causal")
    if key_lengths:
        spec.append("key-padding=" + ":".join(map(str, key_lengths)))
    if query_lengths:
        spec.append("query-padding=" + ":".join(map(str, query_lengths)))
    if left and (key_lengths or query_lengths):
        spec.append("side=left")
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump({"batch": b, "tq": tq, "tk": tk, "d_model": d, "heads": h, "bias": bias,
                   "cross": cross, "mask": ",".join(spec) or "none",
                   "steps": sorted(steps)}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    torch.set_num_threads(1)
    make_case("article_small", 2, 5, 5, 16, 4)
    make_case("no_bias", 2, 4, 4, 12, 3, bias=False, seed=1)
    make_case("causal_keypad", 2, 6, 6, 16, 4, causal=True, key_lengths=[6, 4], seed=2)
    make_case("left_padding", 2, 5, 5, 8, 2, key_lengths=[5, 3], left=True, seed=3)
    make_case("cross", 2, 3, 7, 16, 2, cross=True, key_lengths=[7, 5], seed=4)
    make_case("query_padding_nan", 2, 5, 5, 16, 4, query_lengths=[5, 3], seed=5)
