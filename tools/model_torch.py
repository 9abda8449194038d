"""The tiny transformer of src/model in PyTorch 1.13, parameter for parameter.

Used by tests/golden/make_model_golden.py (gradient fixtures) and tools/bench-train-vs-torch.sh
(speed). Parameter names equal the checkpoint's .npy file names, so
    model.load_state_dict(load_checkpoint("assets/models/induction-2l"))
loads an attnsim checkpoint.
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    """The article's multi-head attention with a causal mask (attnsim's forward).

    g = kv_heads < h is grouped-query attention: W_K, W_V are nn.Linear(d, g*dk) and the
    h/g query heads of a group read their K/V head through repeat_interleave (the copy that
    common code makes; attnsim reads it through a stride-0 view, same numbers)."""

    def __init__(self, d, h, bias, g=None):
        super().__init__()
        self.h, self.g, self.dk = h, g or h, d // h
        self.W_Q = nn.Linear(d, d, bias=bias)
        self.W_K = nn.Linear(d, self.g * self.dk, bias=bias)
        self.W_V = nn.Linear(d, self.g * self.dk, bias=bias)
        self.W_O = nn.Linear(d, d, bias=bias)

    def forward(self, x):
        B, T, d = x.shape
        r = self.h // self.g
        q = self.W_Q(x).view(B, T, self.h, self.dk).transpose(1, 2)
        k = self.W_K(x).view(B, T, self.g, self.dk).transpose(1, 2).repeat_interleave(r, dim=1)
        v = self.W_V(x).view(B, T, self.g, self.dk).transpose(1, 2).repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        hidden = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        alpha = scores.masked_fill(hidden, float("-inf")).softmax(dim=-1)
        ctx = (alpha @ v).transpose(1, 2).contiguous().view(B, T, d)
        return self.W_O(ctx)


class Mlp(nn.Module):
    def __init__(self, d, bias):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d, bias=bias)
        self.fc2 = nn.Linear(4 * d, d, bias=bias)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.c = c
        if c["layernorm"]:
            self.ln = nn.LayerNorm(d)
        self.attn = Attention(d, c["heads"], c["bias"], c.get("kv_heads"))  # absent: MHA
        if c["mlp"]:
            if c["layernorm"]:
                self.ln2 = nn.LayerNorm(d)
            self.mlp = Mlp(d, c["bias"])

    def forward(self, x):
        x = x + self.attn(self.ln(x) if self.c["layernorm"] else x)
        if self.c["mlp"]:
            x = x + self.mlp(self.ln2(x) if self.c["layernorm"] else x)
        return x


class TinyTransformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c["vocab"], c["d_model"])
        self.pos_embed = nn.Embedding(c["seq_len"], c["d_model"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        if c["layernorm"]:
            self.ln_final = nn.LayerNorm(c["d_model"])
        if not c.get("tied"):  # tied (GPT-2's form): the embedding is the unembedding, no bias
            self.unembed = nn.Linear(c["d_model"], c["vocab"], bias=c["bias"])

    def forward(self, tokens):
        B, T = tokens.shape
        x = self.embed(tokens) + self.pos_embed.weight[:T]
        for layer in self.layers:
            x = layer(x)
        x = self.ln_final(x) if self.c["layernorm"] else x
        return x @ self.embed.weight.T if self.c.get("tied") else self.unembed(x)


def loss_fn(logits, targets):
    """Mean cross-entropy over positions whose target is >= 0 (attnsim's -1 = not scored)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)


def adamw(model, lr, weight_decay):
    """attnsim's AdamW: decay on matrices (dim >= 2) only."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                              {"params": rest, "weight_decay": 0.0}], lr=lr)


def save_checkpoint(model, folder, extra=None):
    os.makedirs(folder, exist_ok=True)
    params = []
    for name, p in model.state_dict().items():
        np.save(os.path.join(folder, name + ".npy"), p.detach().numpy().astype(np.float32))
        params.append({"name": name, "file": name + ".npy", "shape": list(p.shape), "dtype": "float32"})
    meta = {"format": "attnsim-model", "version": 1, "config": model.c, "parameters": params}
    meta.update(extra or {})
    with open(os.path.join(folder, "model.json"), "w") as f:
        json.dump(meta, f, indent=1)


def load_checkpoint(folder):
    with open(os.path.join(folder, "model.json")) as f:
        meta = json.load(f)
    model = TinyTransformer(meta["config"])
    model.load_state_dict({p["name"]: torch.from_numpy(np.load(os.path.join(folder, p["file"])))
                           for p in meta["parameters"]})
    return model
