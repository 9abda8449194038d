// heads, ablate and predict on a Hugging Face folder (hf_commands.h).
#include <cstdio>

#include "engine/checked.h"
#include "engine/error.h"
#include "hf_commands.h"
#include "model/experiments/hf_eval.h"
#include "model/training/memory.h"
#include "model_report.h"

namespace attnsim::cli {

namespace {

constexpr int64_t kRepeatLen = 24, kRepeatSequences = 4;  // BOS + r + r, r of 24 random tokens, 4 seeds

// The input tokens, the model loaded with one forward of `T_extra` more tokens predicted.
struct Loaded {
  model::hf::HfConfig config;
  model::hf::HfText text;
  std::vector<int32_t> tokens;
  model::hf::HfModel model;
};

Loaded load(const std::string& dir, const HfInput& in, bool tokens_optional, int64_t mem_limit, const std::string& what) {
  Loaded l;
  l.config = model::hf::read_hf_config(dir);
  l.text = model::hf::open_hf_text(dir, !in.text.empty());
  if (!tokens_optional || !in.tokens.empty() || !in.text.empty()) l.tokens = hf_input_tokens(in, dir, l.config, l.text);
  const int64_t T = std::max<int64_t>(static_cast<int64_t>(l.tokens.size()), 1 + 2 * kRepeatLen);
  // two passes alive at once (ablation: the plain and the ablated one)
  l.model = model::hf::load_hf_checked(dir, checked_mul(model::hf::predict_hf_forward_bytes(l.config, T, false), 2), mem_limit, what);
  return l;
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

}  // namespace

int run_hf_heads(const std::string& dir, const HfInput& in, int64_t mem_limit, bool json) {
  const Loaded l = load(dir, in, true, mem_limit, "scoring this model's heads");
  const model::HeadTable repeated = model::hf::score_hf_heads_repeated(l.model, kRepeatLen, kRepeatSequences, 1);
  std::optional<model::HeadTable> own;
  if (!l.tokens.empty()) {
    model::hf::HfForwardOptions o;
    o.keep_layer = l.config.layers;  // alpha only
    own = model::hf::score_hf_heads({model::hf::hf_forward(l.model, l.tokens, o)}, {l.tokens}, l.config.heads);
  }
  if (json) {
    nlohmann::json j{{"model", dir}, {"layers", l.config.layers}, {"heads_per_layer", l.config.heads},
                     {"repeated", {{"sequences", kRepeatSequences}, {"repeat_length", kRepeatLen},
                                   {"bos", l.config.bos}, {"heads", head_table_json(repeated)}}}};
    if (own) j["tokens"] = {{"ids", l.tokens}, {"heads", head_table_json(*own)}};
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
  }
  std::printf("%s: %lld layers x %lld heads\n\n", dir.c_str(), static_cast<long long>(l.config.layers),
              static_cast<long long>(l.config.heads));
  if (own) {
    std::printf("on the given tokens (%zu: %s)\n", l.tokens.size(), ids_text(l.tokens).c_str());
    print_head_table(*own);
    std::printf("\n");
  }
  const int64_t r = (static_cast<int64_t>(model::hf::repeated_random_tokens(l.config, kRepeatLen, 1).size()) -
                     (l.config.bos >= 0 ? 1 : 0)) / 2;  // shorter where the model has few positions
  std::printf("on %lld repeated random sequences (%sr + r, r = %lld random tokens)\n",
              static_cast<long long>(kRepeatSequences), l.config.bos >= 0 ? "BOS + " : "", static_cast<long long>(r));
  print_head_table(repeated);
  return 0;
}

int run_hf_ablate(const std::string& dir, const HfInput& in, const std::string& heads, bool mean, int64_t mem_limit,
                  bool json) {
  const model::hf::HfConfig config = model::hf::read_hf_config(dir);
  const std::vector<model::HeadRef> set = heads.empty() ? std::vector<model::HeadRef>{} : model::hf::parse_hf_heads(heads, config);
  const Loaded l = load(dir, in, false, mem_limit, "ablating this model's heads");
  double base = 0;
  const auto rows = model::hf::ablate_hf_heads(l.model, l.tokens, set, mean, &base);
  auto name = [](const model::hf::HeadAblation& r) {
    std::string s;
    for (const auto& h : r.heads) s += (s.empty() ? "" : ",") + std::to_string(h.layer) + "." + std::to_string(h.head);
    return s;
  };
  if (json) {
    nlohmann::json j{{"mode", mean ? "mean" : "zero"}, {"tokens", l.tokens}, {"base_loss", base}, {"ablated", nlohmann::json::array()}};
    for (const auto& r : rows) j["ablated"].push_back({{"heads", name(r)}, {"loss", r.loss}, {"delta", r.delta}});
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
  }
  std::printf("%s ablation; next-token loss over the %zu given tokens (nats): %.4f with every head\n",
              mean ? "mean" : "zero", l.tokens.size(), base);
  std::printf("%-12s %9s %9s\n", "heads", "loss", "Δ");
  for (const auto& r : rows) std::printf("%-12s %9.4f %+9.4f\n", name(r).c_str(), r.loss, r.delta);
  return 0;
}

int run_hf_predict(const std::string& dir, const HfInput& in, int64_t k, int64_t mem_limit, bool json) {
  const Loaded l = load(dir, in, false, mem_limit, "running this model");
  if (k > l.config.vocab)
    throw Error("--top-k " + std::to_string(k) + " is more than the model's " + std::to_string(l.config.vocab) + " tokens");
  model::hf::HfForwardOptions o;
  o.keep_layer = l.config.layers;
  const model::hf::HfForward run = model::hf::hf_forward(l.model, l.tokens, o);
  const auto top = model::hf::top_k(run.logits, static_cast<int64_t>(l.tokens.size()) - 1, k);
  if (json) {
    nlohmann::json j{{"tokens", l.tokens}, {"top", nlohmann::json::array()}};
    if (l.text.tokenizer) j["text"] = l.text.text(l.tokens);
    for (const auto& p : top) j["top"].push_back({{"token", p.token}, {"label", l.text.label(p.token)}, {"prob", p.prob}, {"logit", p.logit}});
    if (l.tokens.size() >= 2) j["loss"] = model::hf::next_token_loss(run.logits, l.tokens);
    std::printf("%s\n", j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("after %zu tokens (%s), the next token:\n", l.tokens.size(), ids_text(l.tokens).c_str());
  if (l.text.tokenizer) std::printf("text: \"%s\"\n", one_line(l.text.text(l.tokens)).c_str());
  std::printf("%-4s %8s %-20s %9s %9s\n", "rank", "id", "token", "prob", "logit");
  for (size_t i = 0; i < top.size(); ++i)
    std::printf("%-4zu %8d %-20s %9.4f %9.3f\n", i + 1, top[i].token, l.text.label(top[i].token).c_str(), top[i].prob,
                top[i].logit);
  return 0;
}

}  // namespace attnsim::cli
