#include "model/experiments/repeat_prompts.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "model/pass/forward.h"

namespace attnsim::model {

const std::vector<RepeatPrompt>& repeat_prompts() {
  static const std::vector<RepeatPrompt> prompts = {
      {"the cat sat on the mat. the cat sat on the", " mat"},
      {"Sarah Connor met a friend at the station. Later that day, Sarah", " Connor"},
      {"The letter was signed by Thomas Jefferson. It was written by Thomas", " Jefferson"},
      {"Everyone in the village knew Peter Hansen, and the boat was built by Peter", " Hansen"},
      {"Alice Moreau sang the first song of the evening, and then Alice", " Moreau"},
      {"When Daniel Brooks came home, the dog ran to meet Daniel", " Brooks"},
  };
  return prompts;
}

std::vector<PromptResult> run_repeat_prompts(const Model& model, const hf::Tokenizer& tokenizer) {
  const std::optional<int32_t> eos = tokenizer.token_id("<|endoftext|>");
  if (!eos) throw Error("the tokenizer has no <|endoftext|> to start the prompts with");
  std::vector<PromptResult> out;
  for (const RepeatPrompt& p : repeat_prompts()) {
    std::vector<int32_t> ids{*eos};
    const std::vector<int32_t> text = tokenizer.encode(p.text);
    ids.insert(ids.end(), text.begin(), text.end());
    if (static_cast<int64_t>(ids.size()) > model.config.seq_len)
      throw Error("the prompt \"" + p.text + "\" is " + std::to_string(ids.size()) + " tokens, the model has " +
                  std::to_string(model.config.seq_len) + " positions");
    const int32_t want = tokenizer.encode(p.expected).at(0);
    const Tensor logits = forward_finite(model, batch_from_tokens({ids})).logits;  // (1,T,V)
    const int64_t V = model.config.vocab, T = static_cast<int64_t>(ids.size());
    const float* z = logits.f32() + (T - 1) * V;  // the last position's next-token logits
    const float mx = *std::max_element(z, z + V);
    double sum = 0;
    for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(z[v] - mx));
    PromptResult r{p, tokenizer.decode({static_cast<int32_t>(std::max_element(z, z + V) - z)}),
                   std::exp(static_cast<double>(z[want] - mx)) / sum, 1};
    for (int64_t v = 0; v < V; ++v) r.rank += z[v] > z[want];
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace attnsim::model
