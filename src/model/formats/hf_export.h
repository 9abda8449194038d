// A checkpoint attnsim trained, written as a Hugging Face GPT-2 folder (issue 36), so every
// Hugging Face path in attnsim opens it and so does any GPT-2 loader that follows Hugging
// Face's parameter names (transformers' GPT2LMHeadModel):
//
//   config.json         model_type gpt2, n_embd, n_head, n_layer, n_positions, vocab_size,
//                       n_inner 4·d, activation_function "gelu" (the exact GELU the trainer
//                       uses), layer_norm_epsilon 1e-5, tie_word_embeddings
//   model.safetensors   wte, wpe, h.L.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
//                       mlp.c_proj}, ln_f; Conv1D weights are (in, out), the transpose of the
//                       trainer's nn.Linear (out, in); c_attn is [W_Q | W_K | W_V] side by side
//   tokenizer files     copied from a tokenizer folder when one is given (bpe-train writes one)
//
// Only GPT-2's form can be written: LayerNorm, the MLP, biases, the tied unembedding and as
// many K/V heads as heads; anything else is one Error saying what the checkpoint lacks.
#pragma once

#include <string>

#include "model/formats/toy_model.h"

namespace attnsim::model::hf {

// Writes DIR whole or not at all (engine/atomic_file.h), the weights as F32, or as F16 (each
// rounded to the nearest half: half the bytes, for the page) when `f16`; `force` replaces a
// non-empty DIR. `tokenizer_dir` ("" for none) holds tokenizer.json and/or vocab.json +
// merges.txt, copied beside the weights; its vocabulary must fit the model's.
void export_gpt2(const Model& model, const std::string& dir, const std::string& tokenizer_dir, bool force,
                 bool f16 = false);

}  // namespace attnsim::model::hf
