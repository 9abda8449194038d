#include "model/experiments/text_syntax.h"

#include "engine/error.h"
#include "model/training/tasks.h"

namespace attnsim::model {

hf::SyntaxReport score_syntax_native(const Model& m, const hf::Tokenizer& tok, const hf::ArcSet& arcs) {
  const std::optional<int32_t> eos = tok.token_id("<|endoftext|>");
  if (!eos) throw Error("the tokenizer has no <|endoftext|> to start each sentence with");
  return hf::score_syntax(m.config.layers, m.config.heads, arcs, [&](const std::string& text) {
    hf::SentenceAttention a;
    std::vector<int32_t> ids{*eos};
    std::vector<int32_t> rest;
    a.spans = tok.encode_spans(text, &rest);
    a.spans.insert(a.spans.begin(), hf::Span{0, 0});  // EOS covers no byte of the sentence
    ids.insert(ids.end(), rest.begin(), rest.end());
    if (static_cast<int64_t>(ids.size()) > m.config.seq_len)
      throw Error("an annotated sentence is " + std::to_string(ids.size()) + " tokens with <|endoftext|>, more than the model's " +
                  std::to_string(m.config.seq_len) + " positions");
    const Activations acts = forward_finite(m, batch_from_tokens({ids}));
    for (const LayerActs& l : acts.layers) a.alpha.push_back(l.attn.at("alpha").out.contiguous());  // (1,h,T,T)
    return a;
  });
}

}  // namespace attnsim::model
