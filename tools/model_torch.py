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

    def __init__(self, d, h, bias, g=None, rope_theta=0):
        super().__init__()
        self.h, self.g, self.dk, self.rope_theta = h, g or h, d // h, rope_theta
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
        if self.rope_theta:
            q, k = rope(q, self.rope_theta), rope(k, self.rope_theta)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        hidden = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        alpha = scores.masked_fill(hidden, float("-inf")).softmax(dim=-1)
        ctx = (alpha @ v).transpose(1, 2).contiguous().view(B, T, d)
        return self.W_O(ctx)


def rope(x, theta):
    """Rotary positions in Hugging Face's rotate_half form (modeling_llama.py): dimension i
    and i + dk/2 of the head at position p turn by p / theta^(2i/dk). x (B,h,T,dk)."""
    T, dk = x.shape[2], x.shape[3]
    inv_freq = 1.0 / (theta ** (torch.arange(0, dk, 2).float() / dk))
    angle = torch.outer(torch.arange(T).float(), inv_freq)
    cos, sin = torch.cat([angle, angle], -1).cos(), torch.cat([angle, angle], -1).sin()
    rotated = torch.cat([-x[..., dk // 2:], x[..., :dk // 2]], -1)
    return x * cos + rotated * sin


class RMSNorm(nn.Module):
    """Llama's norm: x / sqrt(mean(x^2) + eps) * weight, no centring, no bias."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def mlp_dim(c):
    """4d for GELU; SwiGLU's ceil(8d/3) rounded up to a multiple of 8 (config.h)."""
    d = c["d_model"]
    return ((8 * d + 2) // 3 + 7) // 8 * 8 if c.get("swiglu") else 4 * d


class Mlp(nn.Module):
    """fc2(gelu(fc1 x)), or SwiGLU: fc2(silu(gate x) * fc1 x)."""

    def __init__(self, c):
        super().__init__()
        d, m, bias = c["d_model"], mlp_dim(c), c["bias"]
        self.swiglu = c.get("swiglu", False)
        if self.swiglu:
            self.gate = nn.Linear(d, m, bias=bias)
        self.fc1 = nn.Linear(d, m, bias=bias)
        self.fc2 = nn.Linear(m, d, bias=bias)

    def forward(self, x):
        return self.fc2(F.silu(self.gate(x)) * self.fc1(x) if self.swiglu else F.gelu(self.fc1(x)))


def norm(c):
    """The model's norm (LayerNorm or RMSNorm), or None without norms."""
    if c.get("rmsnorm"):
        return RMSNorm(c["d_model"])
    return nn.LayerNorm(c["d_model"]) if c["layernorm"] else None


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.c = c
        self.ln = norm(c)
        self.attn = Attention(d, c["heads"], c["bias"], c.get("kv_heads"), c.get("rope_theta", 0))  # absent: MHA
        if c["mlp"]:
            self.ln2 = norm(c)
            self.mlp = Mlp(c)

    def forward(self, x):
        x = x + self.attn(self.ln(x) if self.ln is not None else x)
        if self.c["mlp"]:
            x = x + self.mlp(self.ln2(x) if self.ln2 is not None else x)
        return x


class TinyTransformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c["vocab"], c["d_model"])
        if not c.get("rope_theta"):  # rotary positions (Llama's form) have no table
            self.pos_embed = nn.Embedding(c["seq_len"], c["d_model"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.ln_final = norm(c)
        if not c.get("tied"):  # tied (GPT-2's form): the embedding is the unembedding, no bias
            self.unembed = nn.Linear(c["d_model"], c["vocab"], bias=c["bias"])

    def forward(self, tokens):
        B, T = tokens.shape
        x = self.embed(tokens)
        if not self.c.get("rope_theta"):
            x = x + self.pos_embed.weight[:T]
        for layer in self.layers:
            x = layer(x)
        x = self.ln_final(x) if self.ln_final is not None else x
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
