"""Reference tensors for Hugging Face models read by attnsim (tests/test_hf_model.cpp).

transformers is not a Debian package, so the three architectures are written here in plain
PyTorch 1.13 following modeling_gpt2.py, modeling_llama.py and modeling_qwen2.py: the same
parameter names, shapes and layouts (GPT-2's Conv1D weights are (in, out), c_attn fused as
[q | k | v]; Llama's nn.Linear weights are (out, in)), the same semantics (pre-LN LayerNorm +
gelu_new + learned positions + tied unembedding; RMSNorm + RoPE in rotate_half form + GQA via
repeat_kv + SwiGLU; Llama 3's "llama3" rope_scaling; Qwen2's q/k/v biases). Each tiny model is written as safetensors (by hand:
8-byte length, JSON header, raw little-endian bytes) in F32, F16 and BF16, and for each dtype
the references are computed from the weights as stored (rounded, then widened to float32):
    tests/golden/hf_<family>_<dtype>/config.json, model.safetensors
    tests/golden/hf_<family>_<dtype>/tokens.npy       (T,) float32 (exact small integers)
    tests/golden/hf_<family>_<dtype>/alpha_<L>.npy    (1,h,T,T) every layer's attention weights
    tests/golden/hf_<family>_<dtype>/logits.npy       (T,V)
    tests/golden/hf_<family>_<dtype>/greedy.npy       (N,) float32: greedy continuation of tokens
    tests/golden/hf_<family>_f32/whole/               every whole-pass step (whole_pass.h) in trace --whole's
                                                       dump layout, sampling at TEMPERATURE, TOP_K, TOP_P
    tests/golden/hf_<family>_f32/lens.npy             (L+1,V) the logit lens at the last position
    tests/golden/hf_<family>_f32/dla.npy, dla_target.npy   the direct logit attribution's parts (lens.h's order)
    tests/golden/hf_gpt2_tok/                          a GPT-2 of the tiny tokenizer's 270 tokens with
                                                       that tokenizer (vocab.json + merges.txt), for --text
    tests/golden/hf_gpt2_padded/                       the same tokenizer under a config of 300 tokens (as
                                                       Qwen2 pads 151,665 to 151,936), whose greedy next
                                                       token after PADDED_PROMPT is 285, an id with no text
    tests/golden/hf_gpt2_tok64/                        GPT-2 of that tokenizer with 64 positions: room for
                                                       the annotated sentences of assets/syntax (arcs)
Run with Debian's python3-torch:  /usr/bin/python3 tests/golden/make_hf_golden.py
"""
import json
import math
import os
import shutil
import struct

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
T, GREEDY = 7, 5

CONFIGS = {
    "gpt2": dict(model_type="gpt2", n_embd=16, n_head=4, n_layer=2, n_positions=16, vocab_size=23,
                 layer_norm_epsilon=1e-5, n_inner=None, activation_function="gelu_new", bos_token_id=22),
    "llama": dict(model_type="llama", hidden_size=16, num_attention_heads=4, num_key_value_heads=2,
                  num_hidden_layers=2, intermediate_size=24, vocab_size=29, max_position_embeddings=32,
                  rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False, hidden_act="silu", bos_token_id=1),
    "llama3": dict(model_type="llama", hidden_size=16, num_attention_heads=4, num_key_value_heads=2,
                   num_hidden_layers=2, intermediate_size=24, vocab_size=29, max_position_embeddings=32,
                   rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True, hidden_act="silu", bos_token_id=1,
                   rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                     original_max_position_embeddings=8)),
    "qwen2": dict(model_type="qwen2", hidden_size=16, num_attention_heads=4, num_key_value_heads=1,
                  num_hidden_layers=2, intermediate_size=20, vocab_size=19, max_position_embeddings=32,
                  rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, hidden_act="silu"),
}
DTYPES = {"f32": (torch.float32, "F32"), "f16": (torch.float16, "F16"), "bf16": (torch.bfloat16, "BF16")}


def gpt2_params(c, g):
    d, V, P, ff = c["n_embd"], c["vocab_size"], c["n_positions"], 4 * c["n_embd"]
    n = lambda *s, std=0.3: torch.randn(*s, generator=g) * std  # noqa: E731
    p = {"wte.weight": n(V, d), "wpe.weight": n(P, d, std=0.1)}
    for l in range(c["n_layer"]):
        h = f"h.{l}."
        p[h + "ln_1.weight"] = 1 + n(d, std=0.1)
        p[h + "ln_1.bias"] = n(d, std=0.1)
        p[h + "attn.c_attn.weight"] = n(d, 3 * d, std=0.5)  # Conv1D: (in, out)
        p[h + "attn.c_attn.bias"] = n(3 * d, std=0.1)
        p[h + "attn.c_proj.weight"] = n(d, d)
        p[h + "attn.c_proj.bias"] = n(d, std=0.1)
        p[h + "ln_2.weight"] = 1 + n(d, std=0.1)
        p[h + "ln_2.bias"] = n(d, std=0.1)
        p[h + "mlp.c_fc.weight"] = n(d, ff)
        p[h + "mlp.c_fc.bias"] = n(ff, std=0.1)
        p[h + "mlp.c_proj.weight"] = n(ff, d)
        p[h + "mlp.c_proj.bias"] = n(d, std=0.1)
    p["ln_f.weight"] = 1 + n(d, std=0.1)
    p["ln_f.bias"] = n(d, std=0.1)
    return p


def llama_params(c, g, qkv_bias):
    d, V, ff = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    dk = d // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * dk
    n = lambda *s, std=0.3: torch.randn(*s, generator=g) * std  # noqa: E731
    p = {"model.embed_tokens.weight": n(V, d, std=1.0)}
    for l in range(c["num_hidden_layers"]):
        h = f"model.layers.{l}."
        p[h + "input_layernorm.weight"] = 1 + n(d, std=0.1)
        for name, out in (("q_proj", d), ("k_proj", kv), ("v_proj", kv), ("o_proj", d)):
            p[h + f"self_attn.{name}.weight"] = n(out, d, std=0.5)  # nn.Linear: (out, in)
            if qkv_bias and name != "o_proj":
                p[h + f"self_attn.{name}.bias"] = n(out, std=0.2)
        p[h + "post_attention_layernorm.weight"] = 1 + n(d, std=0.1)
        p[h + "mlp.gate_proj.weight"] = n(ff, d)
        p[h + "mlp.up_proj.weight"] = n(ff, d)
        p[h + "mlp.down_proj.weight"] = n(d, ff)
    p["model.norm.weight"] = 1 + n(d, std=0.1)
    if not c["tie_word_embeddings"]:
        p["lm_head.weight"] = n(V, d)
    return p


def causal(Tn):
    return torch.triu(torch.ones(Tn, Tn, dtype=torch.bool), 1)  # true = hidden


def gpt2_forward(c, p, ids, rec=None):
    """rec (a dict) receives the whole pass's steps under attnsim's names (whole_pass.h)."""
    rec = {} if rec is None else rec
    d, H = c["n_embd"], c["n_head"]
    dk, Tn = d // H, len(ids)
    eps = c["layer_norm_epsilon"]
    ln = lambda x, w, b: torch.nn.functional.layer_norm(x, (d,), w, b, eps)  # noqa: E731
    gelu_new = lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))  # noqa: E731
    rec["tok_embed"], rec["pos_embed"] = p["wte.weight"][ids], p["wpe.weight"][torch.arange(Tn)]
    x = rec["embed"] = rec["tok_embed"] + rec["pos_embed"]
    alphas = []
    for l in range(c["n_layer"]):
        h, r = f"h.{l}.", rec.setdefault(f"layer_{l}", {})
        a = r["norm_attn"] = ln(x, p[h + "ln_1.weight"], p[h + "ln_1.bias"])
        qkv = a @ p[h + "attn.c_attn.weight"] + p[h + "attn.c_attn.bias"]  # Conv1D: x·W + b
        q, k, v = (t.view(Tn, H, dk).transpose(0, 1) for t in qkv.split(d, dim=-1))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(dk)
        s = s.masked_fill(causal(Tn), torch.finfo(s.dtype).min)
        alpha = torch.softmax(s, dim=-1)
        alphas.append(alpha.unsqueeze(0))
        ctx = (alpha @ v).transpose(0, 1).reshape(Tn, d)
        r["out"] = ctx @ p[h + "attn.c_proj.weight"] + p[h + "attn.c_proj.bias"]
        # per head: ctx_h · W_O's rows of head h (Conv1D (in, out)), for the logit attribution
        r["heads"] = [ctx[:, i * dk:(i + 1) * dk] @ p[h + "attn.c_proj.weight"][i * dk:(i + 1) * dk] for i in range(H)]
        r["attn_bias"] = p[h + "attn.c_proj.bias"]
        x = r["resid_attn"] = x + r["out"]
        m = r["norm_mlp"] = ln(x, p[h + "ln_2.weight"], p[h + "ln_2.bias"])
        r["mlp_up"] = m @ p[h + "mlp.c_fc.weight"] + p[h + "mlp.c_fc.bias"]
        r["mlp_act"] = gelu_new(r["mlp_up"])
        r["mlp_down"] = r["mlp_act"] @ p[h + "mlp.c_proj.weight"] + p[h + "mlp.c_proj.bias"]
        x = r["resid_mlp"] = x + r["mlp_down"]
    rec["final"] = dict(kind="layernorm", w=p["ln_f.weight"], b=p["ln_f.bias"], eps=eps, unembed=p["wte.weight"])
    x = rec["norm_final"] = ln(x, p["ln_f.weight"], p["ln_f.bias"])
    return alphas, x @ p["wte.weight"].T  # tied


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def llama_forward(c, p, ids, rec=None):
    rec = {} if rec is None else rec
    d, H, G = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    dk, Tn, eps = d // H, len(ids), c["rms_norm_eps"]

    def rms(x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def lin(x, name):
        y = x @ p[name + ".weight"].T
        return y + p[name + ".bias"] if name + ".bias" in p else y

    inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, dk, 2, dtype=torch.int64).float() / dk))
    rs = c.get("rope_scaling")
    if rs:  # modeling_rope_utils.py's llama3 rule: slow pairs stretched by factor, a smooth band between
        L, lo, hi, factor = rs["original_max_position_embeddings"], rs["low_freq_factor"], rs["high_freq_factor"], rs["factor"]
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > L / lo, inv_freq / factor, inv_freq)
        smooth = (L / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < L / hi) * ~(wavelen > L / lo)
        inv_freq = torch.where(medium, smoothed, scaled)
    freqs = torch.arange(Tn).float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()  # (T, dk)
    x = rec["tok_embed"] = rec["embed"] = p["model.embed_tokens.weight"][ids]
    alphas = []
    for l in range(c["num_hidden_layers"]):
        h, r = f"model.layers.{l}.", rec.setdefault(f"layer_{l}", {})
        a = r["norm_attn"] = rms(x, p[h + "input_layernorm.weight"])
        q = lin(a, h + "self_attn.q_proj").view(Tn, H, dk).transpose(0, 1)
        k = lin(a, h + "self_attn.k_proj").view(Tn, G, dk).transpose(0, 1)
        v = lin(a, h + "self_attn.v_proj").view(Tn, G, dk).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(H // G, dim=0), v.repeat_interleave(H // G, dim=0)  # repeat_kv
        s = (q @ k.transpose(-1, -2)) / math.sqrt(dk)
        s = s.masked_fill(causal(Tn), torch.finfo(s.dtype).min)
        alpha = torch.softmax(s, dim=-1)
        alphas.append(alpha.unsqueeze(0))
        ctx = (alpha @ v).transpose(0, 1).reshape(Tn, d)
        r["out"] = lin(ctx, h + "self_attn.o_proj")
        wo = p[h + "self_attn.o_proj.weight"]  # (out, in): head i reads columns i·dk..
        r["heads"] = [ctx[:, i * dk:(i + 1) * dk] @ wo[:, i * dk:(i + 1) * dk].T for i in range(H)]
        r["attn_bias"] = torch.zeros(d)  # o_proj has no bias in Llama or Qwen2
        x = r["resid_attn"] = x + r["out"]
        m = r["norm_mlp"] = rms(x, p[h + "post_attention_layernorm.weight"])
        r["mlp_gate"], r["mlp_up"] = lin(m, h + "mlp.gate_proj"), lin(m, h + "mlp.up_proj")
        r["mlp_act"] = torch.nn.functional.silu(r["mlp_gate"]) * r["mlp_up"]
        r["mlp_down"] = lin(r["mlp_act"], h + "mlp.down_proj")
        x = r["resid_mlp"] = x + r["mlp_down"]
    head = p["model.embed_tokens.weight"] if c["tie_word_embeddings"] else p["lm_head.weight"]
    rec["final"] = dict(kind="rmsnorm", w=p["model.norm.weight"], b=torch.zeros(d), eps=eps, unembed=head)
    x = rec["norm_final"] = rms(x, p["model.norm.weight"])
    return alphas, x @ head.T


TEMPERATURE, TOP_K, TOP_P = 0.8, 5, 0.9  # the sampling steps' fixture: trace --whole --temperature 0.8 --top-k 5 --top-p 0.9


def final_norm(f, x):
    """The final norm of whole_pass.h on rows x (..., d), in float64."""
    x = x.double()
    if f["kind"] == "layernorm":
        x = x - x.mean(-1, keepdim=True)
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + f["eps"]) * f["w"].double() + f["b"].double()


def sampling_steps(logits):
    """probs (1,T,V) at TEMPERATURE; top_k, top_p (1,V) on the last row, sampling.h's rules:
    rank by (logit desc, id asc); keep a token while the kept mass ranked before it is below TOP_P."""
    z = logits.double() / TEMPERATURE
    probs = torch.softmax(z, -1)
    last = z[-1]
    order = sorted(range(last.numel()), key=lambda i: (-float(last[i]), i))
    keep_k = torch.zeros_like(last, dtype=torch.bool)
    keep_k[order[:TOP_K]] = True
    top_k = torch.softmax(last.masked_fill(~keep_k, -math.inf), -1)
    keep_p, before = torch.zeros_like(keep_k), 0.0
    for i in order[:TOP_K]:
        keep_p[i] = before < TOP_P
        before += float(top_k[i])
    top_p = torch.softmax(last.masked_fill(~keep_p, -math.inf), -1)
    return probs, top_k, top_p


def lens_and_attribution(rec, n_layers, heads):
    """The logit lens at the last position (L+1, V) and the direct logit attribution of the
    final top token (lens.h's parts, in its order), TransformerLens's frozen-scale convention."""
    f, U = rec["final"], rec["final"]["unembed"].double()
    stages = [rec["embed"]] + [rec[f"layer_{l}"]["resid_mlp"] for l in range(n_layers)]
    lens = torch.stack([final_norm(f, s[-1]) @ U.T for s in stages])
    x = stages[-1][-1].double()
    target = int(lens[-1].argmax())
    centre = f["kind"] == "layernorm"
    xc = x - x.mean() if centre else x
    scale = 1.0 / torch.sqrt(xc.pow(2).mean() + f["eps"])
    direction = scale * f["w"].double() * U[target]

    def part(c):
        c = c.double()
        return float(((c - c.mean()) if centre else c) @ direction)

    pos = rec.get("pos_embed")
    parts = [part(rec["tok_embed"][-1]), part(pos[-1]) if pos is not None else 0.0]
    for l in range(n_layers):
        r = rec[f"layer_{l}"]
        parts += [part(r["heads"][i][-1]) for i in range(heads)]
        parts += [part(r["attn_bias"]), part(r["mlp_down"][-1])]
    parts.append(float(f["b"].double() @ U[target]))
    return lens, np.array(parts), target


def write_whole(out, c, rec, logits):
    """tests/golden/hf_<family>_f32/whole/: the dump layout of trace --whole (OUT/<step>.npy,
    OUT/layer_<L>/<step>.npy, batch 1 first), plus lens.npy, dla.npy and dla_target.npy."""
    w = os.path.join(out, "whole")
    save = lambda path, t: np.save(os.path.join(w, path), np.asarray(t, dtype=np.float32))  # noqa: E731
    n_layers = c.get("n_layer", c.get("num_hidden_layers"))
    heads = c.get("n_head", c.get("num_attention_heads"))
    for l in range(n_layers):
        os.makedirs(os.path.join(w, f"layer_{l}"), exist_ok=True)
        for name, t in rec[f"layer_{l}"].items():
            if name not in ("heads", "attn_bias"):
                save(f"layer_{l}/{name}.npy", t.unsqueeze(0))
    for name in ("tok_embed", "pos_embed", "embed", "norm_final"):
        if name in rec:
            save(f"{name}.npy", rec[name].unsqueeze(0))
    save("logits.npy", logits.unsqueeze(0))
    probs, top_k, top_p = sampling_steps(logits)
    save("probs.npy", probs.unsqueeze(0))
    save("top_k.npy", top_k.unsqueeze(0))
    save("top_p.npy", top_p.unsqueeze(0))
    lens, parts, target = lens_and_attribution(rec, n_layers, heads)
    np.save(os.path.join(out, "lens.npy"), lens.numpy().astype(np.float32))
    np.save(os.path.join(out, "dla.npy"), parts.astype(np.float32))
    np.save(os.path.join(out, "dla_target.npy"), np.array([target], dtype=np.float32))
    # the parts sum to the logit (the script's own check of the convention)
    assert abs(parts.sum() - float(logits[-1, target])) < 1e-4, (parts.sum(), float(logits[-1, target]))


def write_safetensors(path, tensors, st_dtype):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().view(torch.int16).numpy().tobytes() if t.dtype in (torch.float16, torch.bfloat16) \
            else t.contiguous().numpy().tobytes()
        dtype = "F32" if t.dtype == torch.float32 else st_dtype
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the format pads the header with spaces to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    for family, c in CONFIGS.items():
        g = torch.Generator().manual_seed({"gpt2": 1, "llama": 2, "qwen2": 3, "llama3": 5}[family])
        params = gpt2_params(c, g) if family == "gpt2" else llama_params(c, g, qkv_bias=family == "qwen2")
        forward = gpt2_forward if family == "gpt2" else llama_forward
        ids = torch.randint(0, c["vocab_size"], (T,), generator=g)
        for tag, (dtype, st_dtype) in DTYPES.items():
            if family == "llama3" and tag != "f32":  # the scaling is what this one tests
                continue
            stored = {k: v.to(dtype) for k, v in params.items()}
            p = {k: v.to(torch.float32) for k, v in stored.items()}  # what attnsim computes with
            out = os.path.join(HERE, f"hf_{family}_{tag}")
            os.makedirs(out, exist_ok=True)
            on_disk = dict(stored)
            if family == "gpt2":
                P = c["n_positions"]
                for l in range(c["n_layer"]):  # the old causal buffers, which attnsim must ignore
                    on_disk[f"h.{l}.attn.bias"] = torch.tril(torch.ones(P, P)).view(1, 1, P, P)
                if tag == "f16":  # a checkpoint saved from GPT2LMHeadModel: keys under "transformer."
                    on_disk = {"transformer." + k: v for k, v in on_disk.items()}
            write_safetensors(os.path.join(out, "model.safetensors"), on_disk, st_dtype)
            with open(os.path.join(out, "config.json"), "w") as f:
                json.dump(c, f, indent=2)
            with torch.no_grad():
                rec = {}
                alphas, logits = forward(c, p, ids, rec)
                if tag == "f32" and family != "llama3":
                    write_whole(out, c, rec, logits)
                seq = ids.tolist()
                for _ in range(GREEDY):  # greedy, the whole sequence again each step (no cache)
                    seq.append(int(forward(c, p, torch.tensor(seq))[1][-1].argmax()))
            np.save(os.path.join(out, "tokens.npy"), ids.numpy().astype(np.float32))
            for l, a in enumerate(alphas):
                np.save(os.path.join(out, f"alpha_{l}.npy"), a.numpy().astype(np.float32))
            np.save(os.path.join(out, "logits.npy"), logits.numpy().astype(np.float32))
            np.save(os.path.join(out, "greedy.npy"), np.array(seq[T:], dtype=np.float32))
            print(out, "tokens", ids.tolist(), "greedy", seq[T:])


def tokenizer_folder(name, c, params):
    """tests/golden/NAME/: a GPT-2 of config c and params beside the tiny tokenizer's files."""
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, "model.safetensors"), params, "F32")
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    for file in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(HERE, "tokenizers", "gpt2", file), out)


def with_tokenizer():
    """GPT-2 sized to tests/golden/tokenizers/gpt2 (270 tokens), beside that tokenizer's files."""
    c = dict(CONFIGS["gpt2"], vocab_size=270, bos_token_id=None)
    tokenizer_folder("hf_gpt2_tok", c, gpt2_params(c, torch.Generator().manual_seed(4)))


PADDED_PROMPT = [39, 72]  # "Hi" in the tiny tokenizer


def padded_vocabulary():
    """GPT-2 of 300 embedding rows beside the 270-token tokenizer. Row 285 is 20 times the row of
    the best of the first 270 after PADDED_PROMPT, so greedy decoding picks 285 (tied unembedding:
    its logit is 20 times that one's, which is positive)."""
    c = dict(CONFIGS["gpt2"], vocab_size=300, bos_token_id=None)
    p = gpt2_params(c, torch.Generator().manual_seed(6))
    with torch.no_grad():
        p["wte.weight"][270:] = 0
        best = int(gpt2_forward(c, p, torch.tensor(PADDED_PROMPT))[1][-1][:270].argmax())
        p["wte.weight"][285] = 20 * p["wte.weight"][best]
        assert int(gpt2_forward(c, p, torch.tensor(PADDED_PROMPT))[1][-1].argmax()) == 285
    tokenizer_folder("hf_gpt2_padded", c, p)


def long_context():
    """GPT-2 of the tiny tokenizer with 64 positions, beside its files."""
    c = dict(CONFIGS["gpt2"], vocab_size=270, n_positions=64, bos_token_id=None)
    tokenizer_folder("hf_gpt2_tok64", c, gpt2_params(c, torch.Generator().manual_seed(7)))


if __name__ == "__main__":
    main()
    with_tokenizer()
    padded_vocabulary()
    long_context()
