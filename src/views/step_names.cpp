// Display names of the pass's steps. See step_names.h.
#include "views/step_names.h"

#include <cstdlib>
#include <string_view>
#include <utility>

namespace attnsim::app {

namespace {

// Step -> English words; the Korean is i18n.cpp's entry for the words.
constexpr std::pair<std::string_view, const char*> kWords[] = {
    // model level (whole_pass.h)
    {"tok_embed", "token embedding"},
    {"pos_embed", "position embedding"},
    {"embed", "embedding"},
    {"norm_final", "final norm"},
    {"logits", "logits"},
    {"probs", "probabilities"},
    {"top_k", "top-k filter"},
    {"top_p", "top-p filter"},
    {"next_token", "next token"},
    // per block (whole_pass.h)
    {"norm_attn", "norm before attention"},
    {"resid_attn", "stream + attention"},
    {"norm_mlp", "norm before MLP"},
    {"mlp_gate", "MLP gate"},
    {"mlp_up", "MLP up-projection"},
    {"mlp_act", "MLP activation"},
    {"mlp_down", "MLP down-projection"},
    {"resid_mlp", "stream + MLP (block output)"},
    // the direct logit attribution's parts (lens.h)
    {"mlp", "MLP"},
    {"attn_bias", "attention output bias"},
    {"bias", "output bias"},
    // the attention steps (engine/trace.h)
    {"query", "query input"},
    {"key", "key input"},
    {"value", "value input"},
    {"q_proj", "query projection"},
    {"k_proj", "key projection"},
    {"v_proj", "value projection"},
    {"q_view", "queries split by head"},
    {"k_view", "keys split by head"},
    {"v_view", "values split by head"},
    {"q_heads", "queries per head"},
    {"k_heads", "keys per head"},
    {"v_heads", "values per head"},
    {"q_rot", "rotated queries (RoPE)"},
    {"k_rot", "rotated keys (RoPE)"},
    {"k_cache_append", "keys written to the cache"},
    {"v_cache_append", "values written to the cache"},
    {"k_cache", "cached keys"},
    {"v_cache", "cached values"},
    {"k_grouped", "keys shared by a group"},
    {"v_grouped", "values shared by a group"},
    {"scores", "scores q·k"},
    {"scores_scaled", "scores / √dk"},
    {"mask", "mask"},
    {"scores_masked", "masked scores"},
    {"alpha", "attention weights"},
    {"alpha_dropped", "weights after dropout"},
    {"ctx_heads", "weighted values per head"},
    {"ctx_transposed", "heads moved next to each other"},
    {"ctx_contiguous", "heads copied side by side"},
    {"ctx_concat", "heads concatenated"},
    {"out", "output projection"},
};

const char* words_of(std::string_view step) {
  for (const auto& [name, words] : kWords)
    if (name == step) return words;
  return nullptr;
}

// "layer_<n>" -> n; -1 when `s` is not that.
long layer_number(std::string_view s) {
  constexpr std::string_view prefix = "layer_";
  if (s.substr(0, prefix.size()) != prefix || s.size() == prefix.size()) return -1;
  long n = 0;
  for (char c : s.substr(prefix.size())) {
    if (c < '0' || c > '9' || n > 100000) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

std::string step_display_name(const std::string& step, Lang lang) {
  if (const char* w = words_of(step)) return tr_in(lang, w);
  const size_t slash = step.find('/');
  const long layer = layer_number(std::string_view(step).substr(0, slash));
  if (layer < 0) return step;
  const std::string block = trf_in(lang, "block %ld", layer);
  if (slash == std::string::npos) return block;
  const std::string rest = step.substr(slash + 1);
  if (rest.rfind("head_", 0) == 0 && rest.size() > 5 && rest.find_first_not_of("0123456789", 5) == std::string::npos)
    return trf_in(lang, "head %ld.%s", layer, rest.substr(5).c_str());
  if (const char* w = words_of(rest)) return block + " · " + tr_in(lang, w);
  return step;
}

bool has_step_display_name(const std::string& step) {
  return step_display_name(step, Lang::En) != step || step_display_name(step, Lang::Ko) != step;
}

}  // namespace attnsim::app
