"""GPT-2 small (124M) with random weights, for tools/bench-hf-vs-torch.sh.

    bench_hf_torch.py write DIR          config.json + model.safetensors (F32, GPT-2's names and
                                         Conv1D layouts) of random weights of GPT-2 small's shapes,
                                         drawn as GPT-2 initialises them (gpt2_init_params)
    bench_hf_torch.py time DIR T REPS    median ms of PyTorch 1.13 running the same architecture
                                         (tests/golden/make_hf_golden.py's plain-torch GPT-2) on
                                         T tokens, under no_grad, after one warm-up
The weights are what attnsim reads: the timing run loads them back from DIR.
"""
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
import make_hf_golden as hf  # noqa: E402

GPT2_SMALL = dict(model_type="gpt2", n_embd=768, n_head=12, n_layer=12, n_positions=1024, vocab_size=50257,
                  layer_norm_epsilon=1e-5, n_inner=None, activation_function="gelu_new", bos_token_id=50256)


def gpt2_init_params(c, g):
    """GPT-2's own initialisation (transformers' GPT2PreTrainedModel._init_weights): weights and
    embeddings N(0, 0.02), the residual projections (attn.c_proj, mlp.c_proj) N(0, 0.02 /
    sqrt(2·n_layer)), biases 0, norms 1. The test fixtures' σ 0.3-0.5 (make_hf_golden.py) make
    GELU's inputs σ ≈ 14, a scale no trained model runs at. Names and layouts are make_hf_golden's."""
    p = hf.gpt2_params(c, g)  # the names and shapes; every value is drawn again below
    return {k: init_value(k, v, g, c["n_layer"], ("c_proj.weight",)) for k, v in p.items()}


def llama_init_params(c, g, qkv_bias):
    """The same rule on Llama / Qwen2 names: o_proj and down_proj are the residual projections."""
    p = hf.llama_params(c, g, qkv_bias)
    return {k: init_value(k, v, g, c["num_hidden_layers"], ("o_proj.weight", "down_proj.weight")) for k, v in p.items()}


def init_value(name, t, g, n_layer, residual):
    if "ln_" in name or "norm" in name:
        return torch.ones_like(t) if name.endswith("weight") else torch.zeros_like(t)
    if name.endswith("bias"):
        return torch.zeros_like(t)
    std = 0.02 / math.sqrt(2 * n_layer) if name.endswith(residual) else 0.02
    return torch.randn(t.shape, generator=g) * std


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        b, e = v["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:e], dtype=np.float32).reshape(v["shape"]).copy())
    return out


def main():
    if sys.argv[1] == "write":
        out = sys.argv[2]
        os.makedirs(out, exist_ok=True)
        params = gpt2_init_params(GPT2_SMALL, torch.Generator().manual_seed(0))
        hf.write_safetensors(os.path.join(out, "model.safetensors"), params, "F32")
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(GPT2_SMALL, f, indent=2)
        return
    folder, T, reps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    p = read_safetensors(os.path.join(folder, "model.safetensors"))
    ids = torch.randint(0, GPT2_SMALL["vocab_size"], (T,), generator=torch.Generator().manual_seed(1))
    times = []
    with torch.no_grad():
        hf.gpt2_forward(GPT2_SMALL, p, ids)
        for _ in range(reps):
            t0 = time.perf_counter()
            hf.gpt2_forward(GPT2_SMALL, p, ids)
            times.append((time.perf_counter() - t0) * 1e3)
    print(f"{sorted(times)[len(times) // 2]:.3f}")


if __name__ == "__main__":
    main()
