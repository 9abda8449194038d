#!/usr/bin/python3
"""Which copies PyTorch makes in the article's MultiHeadAttention forward, for lesson 03.

attnsim's batched products read transposed views through their strides, so its pass copies
once (contiguous() before the merge). PyTorch's q @ kᵀ and alpha @ v fold (B, h) into one
batch axis with reshape, which copies an operand whose strides cannot express that fold.
This runs the article's class (Debian's python3-torch) under the profiler at T 128,
d_model 512, h 8, eval mode, for B 1 and 4, and writes every aten::clone with the attnsim
step it copies: tests/golden/torch_copies.json (test_lesson_torch_copies.cpp checks the
engine's bmm_copy.* and trace.ctx_contiguous.copied_bytes against it).
    /usr/bin/python3 tools/torch_copies.py > tests/golden/torch_copies.json
"""
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

T, D, H = 128, 512, 8


class MultiHeadAttention(nn.Module):
    """The article's class, self-attention only, no mask."""

    def __init__(self, d_model=D, num_heads=H, dropout=0.1):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))
        self.drop = nn.Dropout(dropout)

    def split_heads(self, x, B, T):
        return x.view(B, T, self.h, self.dk).transpose(1, 2)

    def forward(self, x):
        B, T = x.shape[:2]
        q, k, v = (self.split_heads(W(x), B, T) for W in (self.W_Q, self.W_K, self.W_V))
        alpha = self.drop(F.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dk), dim=-1))
        ctx = (alpha @ v).transpose(1, 2).contiguous()
        return self.W_O(ctx.view(B, T, -1)), alpha


def copied_step(clone, matmul_index):
    """The attnsim step whose tensor this clone copies: the first matmul's operands are
    q_heads and k_heads (kᵀ, (..., d_k, T)), the second's v_heads; contiguous() copies
    ctx_transposed."""
    if clone.cpu_parent.name == "aten::contiguous":
        return "ctx_transposed"
    if matmul_index == 0:
        return "k_heads" if clone.input_shapes[0][-1] == T else "q_heads"
    return "v_heads"


def clones(batch):
    torch.manual_seed(0)
    model = MultiHeadAttention().eval()
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        model(torch.randn(batch, T, D))
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    matmuls = [e.id for e in events if e.name == "aten::matmul"]
    out = []
    for e in events:
        if e.name != "aten::clone":
            continue
        parent = e.cpu_parent
        while parent is not None and parent.name != "aten::matmul":
            parent = parent.cpu_parent
        index = matmuls.index(parent.id) if parent is not None else -1
        shape = e.input_shapes[0]
        out.append({"step": copied_step(e, index), "caller": e.cpu_parent.name, "shape": shape,
                    "bytes": math.prod(shape) * 4})
    return out


def main():
    runs = [{"batch": b, "clones": clones(b)} for b in (1, 4)]
    print(json.dumps({"torch": torch.__version__, "tq": T, "d_model": D, "heads": H, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
