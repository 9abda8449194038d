#include "ablate.h"

#include <algorithm>
#include <sstream>

#include "engine/error.h"
#include "tasks.h"

namespace attnsim::model {

std::vector<std::vector<std::vector<float>>> head_means(const Model& model, const Batch& batch) {
  const Activations acts = forward(model, batch);
  const int64_t h = model.config.heads, dk = model.config.head_dim(), B = batch.batch, T = batch.len;
  std::vector<std::vector<std::vector<float>>> means(static_cast<size_t>(model.config.layers));
  for (int64_t l = 0; l < model.config.layers; ++l) {
    const Tensor& ctx = acts.layers[static_cast<size_t>(l)].attn.at("ctx_heads").out;  // (B,h,T,dk) contiguous
    for (int64_t hh = 0; hh < h; ++hh) {
      std::vector<double> sum(static_cast<size_t>(dk), 0.0);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t e = 0; e < dk; ++e) sum[e] += ctx.f32()[((b * h + hh) * T + t) * dk + e];
      std::vector<float> mean(static_cast<size_t>(dk));
      for (int64_t e = 0; e < dk; ++e) mean[e] = static_cast<float>(sum[e] / static_cast<double>(B * T));
      means[static_cast<size_t>(l)].push_back(std::move(mean));
    }
  }
  return means;
}

AblationEval evaluate_ablation(const Model& model, const Batch& batch, const Ablation& ablation) {
  return {cross_entropy(forward(model, batch).logits, batch),
          cross_entropy(forward(model, batch, &ablation).logits, batch)};
}

std::vector<AblationRow> ablate_each_head(const Model& model, const Batch& batch, bool mean) {
  Ablation a;
  a.mean = mean;
  if (mean) a.means = head_means(model, batch);
  std::vector<AblationRow> rows;
  for (int64_t l = 0; l < model.config.layers; ++l)
    for (int64_t h = 0; h < model.config.heads; ++h) {
      a.heads = {{l, h}};
      rows.push_back({{l, h}, cross_entropy(forward(model, batch, &a).logits, batch)});
    }
  return rows;
}

Batch ablation_batch(const ModelConfig& c) {
  TaskSpec s;
  s.vocab = c.vocab;
  s.len = c.seq_len;
  s.max_repeat = std::max<int64_t>(1, std::min<int64_t>({19, (c.seq_len - 1) / 2, c.vocab - 3}));
  s.min_repeat = std::min<int64_t>(8, s.max_repeat);
  return make_batch(s, 128, 4242, 0);
}

std::vector<HeadRef> parse_heads(const std::string& text, const ModelConfig& c) {
  std::vector<HeadRef> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t dot = item.find('.');
    HeadRef r{-1, -1};
    try {
      size_t used = 0;
      if (dot == std::string::npos) throw Error("");
      r.layer = std::stoll(item.substr(0, dot), &used);
      if (used != dot) throw Error("");
      r.head = std::stoll(item.substr(dot + 1), &used);
      if (used != item.size() - dot - 1) throw Error("");
    } catch (const std::exception&) {
      throw Error("head '" + item + "' is not LAYER.HEAD (e.g. 1.3)");
    }
    if (r.layer < 0 || r.layer >= c.layers || r.head < 0 || r.head >= c.heads)
      throw Error("head " + item + " is outside the model (layers 0.." + std::to_string(c.layers - 1) + ", heads 0.." +
                  std::to_string(c.heads - 1) + ")");
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  if (out.empty()) throw Error("no heads given (e.g. --heads 0.1,1.3)");
  return out;
}

}  // namespace attnsim::model
