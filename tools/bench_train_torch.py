"""One training step of the tiny transformer in PyTorch 1.13, timed like `attnsim-cli train
--bench`: the same model (tools/model_torch.py), task shape, batch and AdamW; prints the median
ms per step. Usage: bench_train_torch.py STEPS THREADS [layers heads d_model vocab seq batch]
"""
import statistics
import sys
import time

import torch

import model_torch as mt

steps, threads = int(sys.argv[1]), int(sys.argv[2])
L, h, d, V, T, B = (int(x) for x in (sys.argv[3:9] if len(sys.argv) > 3 else (2, 4, 64, 65, 48, 32)))
torch.set_num_threads(threads)
torch.manual_seed(1)
c = dict(vocab=V, seq_len=T, d_model=d, heads=h, layers=L, layernorm=False, mlp=False, bias=True, seed=1)
model = mt.TinyTransformer(c)
opt = mt.adamw(model, lr=1e-3, weight_decay=0.01)
tokens = torch.randint(1, V, (B, T))
tokens[:, 0] = 0
targets = torch.full((B, T), -1, dtype=torch.long)
targets[:, :-1] = tokens[:, 1:]
times = []
for i in range(steps + 5):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = mt.loss_fn(model(tokens), targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if i >= 5:
        times.append((time.perf_counter() - t0) * 1000)
print(f"{statistics.median(times):.3f}")
