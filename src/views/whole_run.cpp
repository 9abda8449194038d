// The whole pass's readings for the model views. See whole_run.h.
#include "views/whole_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace attnsim::app {

namespace {

// ‖x_t‖ for each position t of a (1,T,d) stream, in double.
std::vector<double> row_norms(const Tensor& stream) {
  const Tensor x = stream.contiguous();  // copies only when a view
  const int64_t T = x.size(1), d = x.size(2);
  std::vector<double> out(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i) s += static_cast<double>(x.f32()[t * d + i]) * x.f32()[t * d + i];
    out[static_cast<size_t>(t)] = std::sqrt(s);
  }
  return out;
}

std::string head_name(int64_t layer, int64_t head) {
  return "layer_" + std::to_string(layer) + "/head_" + std::to_string(head);
}

// Each head's (T,T) weights of a (1,H,T,T) alpha, averaged into n x n blocks (n = min(T,
// kMapCells)): a block's value is the mean over its query rows of the weight they give its
// key columns, so each map row still sums to 1.
std::vector<std::vector<float>> pooled_maps(const Tensor& alpha, int64_t* n_out) {
  const Tensor a = alpha.contiguous();
  const int64_t H = a.size(1), T = a.size(2), n = std::min(T, kMapCells);
  std::vector<std::vector<float>> maps(static_cast<size_t>(H), std::vector<float>(static_cast<size_t>(n * n), 0.0f));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r0 = i * T / n, r1 = (i + 1) * T / n;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < T; ++c)
          maps[static_cast<size_t>(h)][static_cast<size_t>(i * n + c * n / T)] +=
              a.f32()[(h * T + r) * T + c] / static_cast<float>(r1 - r0);
    }
  *n_out = n;
  return maps;
}

std::vector<StepShape> ran_steps(const Trace& t) {
  std::vector<StepShape> out;
  for (const Step& s : t.steps)
    if (!s.skipped()) out.push_back({s.name, s.out.shape()});
  return out;
}

}  // namespace

bool WholeRun::ran(const std::string& step) const {
  for (const auto* list : {&model_steps, &block_steps})
    for (const StepShape& s : *list)
      if (s.name == step) return true;
  return false;
}

double WholeRun::max_stream_norm() const {
  double m = 0;
  for (const auto& stage : stream_norm)
    for (double v : stage) m = std::max(m, v);
  return m;
}

WholeRun whole_run(const model::PassModel& m, const std::vector<int32_t>& tokens, int32_t dla_token) {
  const auto t0 = std::chrono::steady_clock::now();
  const model::WholeTrace w = model::whole_forward(m, tokens);
  WholeRun r;
  r.tokens = tokens;
  const Tensor& logits = w.logits();  // (1,T,V)
  r.last_logits = logits.narrow(1, logits.size(1) - 1, 1).contiguous();  // (1,1,V) copies: the trace goes
  r.lens = model::logit_lens(m, w);
  r.dla = model::attribute_logit(m, w, -1, dla_token);
  r.stream_norm.push_back(row_norms(w.model.at("embed").out));
  for (const Trace& block : w.blocks) {
    r.stream_norm.push_back(row_norms(model::block_output(m, block)));
    r.head_maps.push_back(pooled_maps(block.at("alpha").out, &r.map_size));
  }
  r.model_steps = ran_steps(w.model);
  if (!w.blocks.empty()) r.block_steps = ran_steps(w.blocks.front());
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

double head_part(const model::LogitAttribution& dla, int64_t layer, int64_t head) {
  const std::string name = head_name(layer, head);
  for (const model::LogitPart& p : dla.parts)
    if (p.name == name) return p.value;
  return 0;
}

std::vector<model::LogitPart> direct_parts(const model::LogitAttribution& dla) {
  std::vector<model::LogitPart> out;
  for (const model::LogitPart& p : dla.parts)
    if (p.name.find("/head_") == std::string::npos) out.push_back(p);
  return out;
}

}  // namespace attnsim::app
