// A checkpoint attnsim trained, written as a Hugging Face folder (issue 36; Llama's form, issue
// 46), so every Hugging Face path in attnsim opens it and so does any loader that follows
// Hugging Face's parameter names (transformers' GPT2LMHeadModel, LlamaForCausalLM):
//
// GPT-2's form (--layernorm --mlp --tied, biases, one K/V head per head):
//   config.json         model_type gpt2, n_embd, n_head, n_layer, n_positions, vocab_size,
//                       n_inner 4·d, activation_function "gelu" (the exact GELU the trainer
//                       uses), layer_norm_epsilon 1e-5, tie_word_embeddings
//   model.safetensors   wte, wpe, h.L.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
//                       mlp.c_proj}, ln_f; Conv1D weights are (in, out), the transpose of the
//                       trainer's nn.Linear (out, in); c_attn is [W_Q | W_K | W_V] side by side
// Llama's form (--rmsnorm --rope θ --mlp --swiglu --no-bias; GQA and tied or not):
//   config.json         model_type llama, hidden_size, intermediate_size, num_attention_heads,
//                       num_key_value_heads, num_hidden_layers, rms_norm_eps 1e-5, rope_theta,
//                       max_position_embeddings, hidden_act silu, tie_word_embeddings
//   model.safetensors   model.embed_tokens, model.layers.L.{input_layernorm, self_attn.q_proj
//                       k_proj v_proj o_proj, post_attention_layernorm, mlp.gate_proj up_proj
//                       down_proj}, model.norm, lm_head (untied); nn.Linear's (out, in) as is,
//                       and RoPE in HF's rotate_half pairing, which the trainer uses too
// Both: the tokenizer files, copied from a tokenizer folder when one is given (bpe-train
// writes one).
//
// Any other form is one Error saying what the checkpoint lacks for the nearer of the two.
#pragma once

#include <string>

#include "model/formats/toy_model.h"

namespace attnsim::model::hf {

// Writes DIR whole or not at all (engine/atomic_file.h) in the checkpoint's form (RMSNorm:
// Llama's, else GPT-2's), the weights as F32, or as F16 (each rounded to the nearest half:
// half the bytes, for the page) when `f16`; `force` replaces a non-empty DIR. `tokenizer_dir`
// ("" for none) holds tokenizer.json and/or vocab.json + merges.txt, copied beside the
// weights; its vocabulary must fit the model's.
void export_hf(const Model& model, const std::string& dir, const std::string& tokenizer_dir, bool force,
               bool f16 = false);

}  // namespace attnsim::model::hf
