#include "model/experiments/ablate.h"

#include <algorithm>
#include <limits>

#include "engine/checked.h"
#include "engine/error.h"
#include "model/training/tasks.h"

namespace attnsim::model {

std::vector<std::vector<std::vector<float>>> head_means(const Model& model, const Batch& batch) {
  const Activations acts = forward_finite(model, batch);
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
  return {cross_entropy(forward_finite(model, batch).logits, batch),
          cross_entropy(forward_finite(model, batch, &ablation).logits, batch)};
}

std::vector<AblationRow> ablate_each_head(const Model& model, const Batch& batch, bool mean) {
  Ablation a;
  a.mean = mean;
  if (mean) a.means = head_means(model, batch);
  std::vector<AblationRow> rows;
  for (int64_t l = 0; l < model.config.layers; ++l)
    for (int64_t h = 0; h < model.config.heads; ++h) {
      a.heads = {{l, h}};
      rows.push_back({{l, h}, cross_entropy(forward_finite(model, batch, &a).logits, batch)});
    }
  return rows;
}

Ablation prune_to(const Model& model, const Batch& batch, int64_t keep) {
  const ModelConfig& c = model.config;
  if (keep < 1 || keep > c.heads)
    throw Error("keep " + std::to_string(keep) + " heads per layer: the model has " + std::to_string(c.heads));
  const double base = cross_entropy(forward_finite(model, batch).logits, batch).parts[kRepeat].loss();
  std::vector<std::vector<std::pair<double, int64_t>>> rise(static_cast<size_t>(c.layers));  // (rise, head)
  for (const AblationRow& row : ablate_each_head(model, batch, false))
    rise[static_cast<size_t>(row.head.layer)].push_back({row.stats.parts[kRepeat].loss() - base, row.head.head});
  Ablation ab;
  for (int64_t l = 0; l < c.layers; ++l) {
    auto& v = rise[static_cast<size_t>(l)];
    std::sort(v.begin(), v.end());  // least important first (equal rises: the lower index)
    for (int64_t i = 0; i < c.heads - keep; ++i) ab.heads.push_back({l, v[static_cast<size_t>(i)].second});
  }
  return ab;
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
  // One grammar: LAYER.HEAD(,LAYER.HEAD)*, each number plain digits. No empty item ("0.0,"),
  // no sign ("+0.+1"), no space (" 0.0"): stoll would take all three.
  std::vector<HeadRef> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t dot = item.find('.');
    const bool digits_only = !item.empty() && item.find_first_not_of("0123456789.") == std::string::npos;
    if (!digits_only || dot == 0 || dot == std::string::npos || dot + 1 == item.size() ||
        item.find('.', dot + 1) != std::string::npos)
      throw Error("head '" + item + "' in --heads '" + text + "' is not LAYER.HEAD (e.g. 1.3; a comma between heads)");
    const int64_t big = std::numeric_limits<int64_t>::max();
    const HeadRef r{parse_int(item.substr(0, dot), "layer", 0, big), parse_int(item.substr(dot + 1), "head", 0, big)};
    if (r.layer >= c.layers || r.head >= c.heads)
      throw Error("head " + item + " is outside the model (layers 0.." + std::to_string(c.layers - 1) + ", heads 0.." +
                  std::to_string(c.heads - 1) + ")");
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace attnsim::model
