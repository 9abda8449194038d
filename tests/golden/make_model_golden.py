"""Gradient fixtures for the tiny transformer (tests/test_model.cpp), from PyTorch 1.13.

For each config: random parameters (torch's own init, a fixed seed), one batch of tokens and
targets, the loss, every parameter's gradient, and the parameters after one AdamW step.
    tests/golden/model_<name>/params/   a checkpoint folder attnsim loads (model.json + .npy)
    tests/golden/model_<name>/tokens.npy, targets.npy   (B,T) float32 (exact small integers)
    tests/golden/model_<name>/loss.npy                  ()
    tests/golden/model_<name>/grads/<param>.npy
    tests/golden/model_<name>/after_adamw/<param>.npy   lr 1e-2, weight decay 0.1, no clipping
Run with Debian's python3-torch:  /usr/bin/python3 tests/golden/make_model_golden.py
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import model_torch as mt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = {
    "attn_only": dict(vocab=11, seq_len=9, d_model=16, heads=4, layers=2, layernorm=False, mlp=False, bias=True, seed=1),
    "ln_mlp": dict(vocab=13, seq_len=8, d_model=12, heads=3, layers=2, layernorm=True, mlp=True, bias=True, seed=2),
    # Llama's form: RMSNorm, rotary positions (base 100: 9 positions turn far), SwiGLU, no biases,
    # 4 query heads on 2 K/V heads
    "llama": dict(vocab=13, seq_len=9, d_model=16, heads=4, kv_heads=2, layers=2, layernorm=False, rmsnorm=True,
                  mlp=True, swiglu=True, bias=False, rope_theta=100.0, seed=3),
}

for name, c in CONFIGS.items():
    torch.manual_seed(c["seed"])
    model = mt.TinyTransformer(c)
    with torch.no_grad():  # embeddings at attnsim's scale; LayerNorm away from 1/0 so its grads are tested
        model.embed.weight.normal_(0, 0.5)
        if hasattr(model, "pos_embed"):
            model.pos_embed.weight.normal_(0, 0.5)
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
            if isinstance(m, mt.RMSNorm):
                m.weight.uniform_(0.5, 1.5)
    B, T = 3, c["seq_len"]
    rng = np.random.default_rng(c["seed"])
    tokens = rng.integers(1, c["vocab"], size=(B, T))
    tokens[:, 0] = 0
    targets = np.full((B, T), -1)
    targets[:, :-1] = tokens[:, 1:]
    targets[1, 2] = -1  # an unscored position in the middle
    out = os.path.join(HERE, "model_" + name)
    mt.save_checkpoint(model, os.path.join(out, "params"))
    np.save(os.path.join(out, "tokens.npy"), tokens.astype(np.float32))
    np.save(os.path.join(out, "targets.npy"), targets.astype(np.float32))
    logits = model(torch.from_numpy(tokens))
    loss = mt.loss_fn(logits, torch.from_numpy(targets))
    loss.backward()
    np.save(os.path.join(out, "loss.npy"), np.array(loss.item(), dtype=np.float32))
    os.makedirs(os.path.join(out, "grads"), exist_ok=True)
    for pname, p in model.named_parameters():
        np.save(os.path.join(out, "grads", pname + ".npy"), p.grad.numpy().astype(np.float32))
    opt = mt.adamw(model, lr=1e-2, weight_decay=0.1)
    opt.step()
    os.makedirs(os.path.join(out, "after_adamw"), exist_ok=True)
    for pname, p in model.named_parameters():
        np.save(os.path.join(out, "after_adamw", pname + ".npy"), p.detach().numpy().astype(np.float32))
    print(name, "loss", loss.item())
