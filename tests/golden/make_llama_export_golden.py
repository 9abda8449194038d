"""The Llama export's oracle (tests/test_hf_export.cpp): a by-hand PyTorch forward of the
Hugging Face LlamaForCausalLM folder attnsim writes for tests/golden/model_llama/params.

It reads only the folder (config.json, model.safetensors, by Hugging Face's names) and writes
modeling_llama.py's forward in plain torch ops: RMSNorm (float32 statistics), q/k/v/o
projections, rotary positions in rotate_half form, the causal softmax over repeat_interleave'd
K/V heads, the SwiGLU MLP, the final norm and lm_head (or the embedding when tied).
    tests/golden/model_llama/export_tokens.npy   (T,) float32 (exact small integers)
    tests/golden/model_llama/export_logits.npy   (T,V)
Run with Debian's python3-torch after a build:
    /usr/bin/python3 tests/golden/make_llama_export_golden.py build/attnsim-cli
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_llama")


def read_safetensors(path):
    """{name: tensor} from a safetensors file (F32 / F16), by the format's layout."""
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        dtype = {"F32": np.float32, "F16": np.float16}[info["dtype"]]
        raw = np.frombuffer(data[8 + n + lo:8 + n + hi], dtype=dtype).astype(np.float32)
        out[name] = torch.from_numpy(raw.reshape(info["shape"]).copy())
    return out


def llama_forward(folder, ids):
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    w = read_safetensors(os.path.join(folder, "model.safetensors"))
    d, h, g = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    dk, T, eps = d // h, len(ids), c["rms_norm_eps"]

    def rms(x, weight):
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, dk, 2, dtype=torch.int64).float() / dk))
    freqs = torch.outer(torch.arange(T).float(), inv_freq)
    cos, sin = torch.cat([freqs, freqs], -1).cos(), torch.cat([freqs, freqs], -1).sin()

    def rotate(x):  # (heads, T, dk)
        return x * cos + torch.cat([-x[..., dk // 2:], x[..., :dk // 2]], -1) * sin

    x = w["model.embed_tokens.weight"][torch.tensor(ids)]  # (T,d)
    hidden = torch.ones(T, T, dtype=torch.bool).triu(1)
    for l in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % l
        a = rms(x, w[p + "input_layernorm.weight"])
        q = (a @ w[p + "self_attn.q_proj.weight"].T).view(T, h, dk).transpose(0, 1)
        k = (a @ w[p + "self_attn.k_proj.weight"].T).view(T, g, dk).transpose(0, 1)
        v = (a @ w[p + "self_attn.v_proj.weight"].T).view(T, g, dk).transpose(0, 1)
        q, k = rotate(q), rotate(k)
        k, v = k.repeat_interleave(h // g, 0), v.repeat_interleave(h // g, 0)
        scores = (q @ k.transpose(-2, -1)) / dk ** 0.5
        alpha = scores.masked_fill(hidden, float("-inf")).softmax(-1)
        ctx = (alpha @ v).transpose(0, 1).reshape(T, d)
        x = x + ctx @ w[p + "self_attn.o_proj.weight"].T
        m = rms(x, w[p + "post_attention_layernorm.weight"])
        gate = torch.nn.functional.silu(m @ w[p + "mlp.gate_proj.weight"].T)
        x = x + (gate * (m @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    x = rms(x, w["model.norm.weight"])
    unembed = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ unembed.T


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else "build/attnsim-cli"
    ids = [0, 5, 3, 11, 5, 3, 7, 12, 1]
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "hf")
        subprocess.run([cli, "export-hf", "--model", os.path.join(HERE, "params"), "--out", folder], check=True)
        with torch.no_grad():
            logits = llama_forward(folder, ids)
    np.save(os.path.join(HERE, "export_tokens.npy"), np.array(ids, dtype=np.float32))
    np.save(os.path.join(HERE, "export_logits.npy"), logits.numpy().astype(np.float32))
    print("logits", tuple(logits.shape), "max |logit|", float(logits.abs().max()))


if __name__ == "__main__":
    main()
