#!/usr/bin/python3
"""PyTorch's time for the same forward pass attnsim-cli bench runs (Debian's python3-torch).

The module below is the standard multi-head attention of the article (four nn.Linear, split
heads with view + transpose, q·kᵀ/√dk, softmax, dropout, α·v, merge with contiguous + view,
W_O) on the same number of threads. Mode "eval": eval mode under no_grad (attnsim-cli bench);
mode "train": the module as constructed, train mode with dropout 0.1 and autograd on
(attnsim-cli bench --train --dropout 0.1). Prints the median in ms.
"""
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F


class Attention(torch.nn.Module):
    def __init__(self, d, h, dropout=0.1):
        super().__init__()
        self.h, self.dk = h, d // h
        self.proj = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(4))
        self.drop = torch.nn.Dropout(dropout)

    def heads(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.h, self.dk).transpose(1, 2)

    def forward(self, x):
        q, k, v = (self.heads(p(x)) for p in self.proj[:3])
        alpha = self.drop(F.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dk), dim=-1))
        ctx = (alpha @ v).transpose(1, 2).contiguous()
        return self.proj[3](ctx.view(x.shape[0], x.shape[1], -1)), alpha


def main():
    b, t, d, h, threads, repeats = (int(a) for a in sys.argv[1:7])
    train = len(sys.argv) > 7 and sys.argv[7] == "train"
    torch.set_num_threads(threads)
    model = Attention(d, h).train(train)
    x = torch.randn(b, t, d)
    times = []
    with torch.enable_grad() if train else torch.no_grad():
        model(x)
        for _ in range(repeats):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    print(f"{statistics.median(times):.2f}")


if __name__ == "__main__":
    main()
