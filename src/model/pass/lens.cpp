#include "model/pass/lens.h"

#include <cmath>

#include "engine/error.h"

namespace attnsim::model {

const Tensor& block_output(const PassModel& m, const Trace& block) {
  return block.at(block_output_step(m)).out;
}

namespace {

int64_t resolve_position(const WholeTrace& w, int64_t position) {
  const int64_t T = w.logits().size(1);
  if (position < 0) position = T - 1;
  if (position >= T)
    throw Error("position " + std::to_string(position) + " is outside the sequence (0.." + std::to_string(T - 1) + ")");
  return position;
}

int32_t resolve_token(const WholeTrace& w, int64_t position, int32_t token) {
  const int64_t V = w.logits().size(2);
  if (token >= V) throw Error("target token " + std::to_string(token) + " is outside the vocabulary (0.." + std::to_string(V - 1) + ")");
  if (token >= 0) return token;
  const float* row = w.logits().f32() + position * V;
  int64_t best = 0;
  for (int64_t i = 1; i < V; ++i)
    if (row[i] > row[best]) best = i;
  return static_cast<int32_t>(best);
}

// row p of a (1,T,d) tensor, in double
std::vector<double> row_of(const Tensor& x, int64_t p) {
  const Tensor c = x.contiguous();
  const int64_t d = c.size(2);
  return std::vector<double>(c.f32() + p * d, c.f32() + (p + 1) * d);
}

}  // namespace

// [SECTION] logit lens

LogitLens logit_lens(const PassModel& m, const WholeTrace& w, int64_t position, int32_t target) {
  LogitLens lens;
  lens.position = resolve_position(w, position);
  lens.target = resolve_token(w, lens.position, target);
  Backend& be = cpu_backend();
  auto read = [&](const std::string& stage, const Tensor& x) {
    const Tensor xr = x.narrow(1, lens.position, 1).contiguous();  // (1,1,d)
    const Tensor h = m.norm == NormKind::None ? xr : apply_norm(m.norm, xr, m.norm_f_w, m.norm_f_b, m.norm_eps);
    LensRow r;
    r.stage = stage;
    r.logits = be.linear(h, m.unembed, m.unembed_bias).to_vector();  // (V)
    const std::vector<float>& l = r.logits;
    double mx = l[0], z = 0;
    for (size_t i = 1; i < l.size(); ++i)
      if (l[i] > mx) mx = l[i], r.top = static_cast<int32_t>(i);
    for (float v : l) z += std::exp(v - mx);
    r.top_prob = 1.0 / z;
    r.target_prob = std::exp(l[static_cast<size_t>(lens.target)] - mx) / z;
    lens.rows.push_back(std::move(r));
  };
  read("embed", w.model.at("embed").out);
  for (int64_t l = 0; l < m.layers; ++l) read("layer_" + std::to_string(l), block_output(m, w.blocks[static_cast<size_t>(l)]));
  return lens;
}

// [SECTION] direct logit attribution

double LogitAttribution::sum() const {
  double s = 0;
  for (const LogitPart& p : parts) s += p.value;
  return s;
}

LogitAttribution attribute_logit(const PassModel& m, const WholeTrace& w, int64_t position, int32_t token) {
  LogitAttribution a;
  a.position = resolve_position(w, position);
  a.token = resolve_token(w, a.position, token);
  const int64_t p = a.position, d = m.d_model, V = m.vocab;
  a.logit = w.logits().f32()[p * V + a.token];

  // the frozen final norm: part c ↦ Σ_i (c_i − centre(c)) · scale · w_i · U[t,i]
  const std::vector<double> x = row_of(block_output(m, w.blocks.back()), p);
  double mean = 0, sq = 0;
  if (m.norm == NormKind::LayerNorm) {
    for (double v : x) mean += v;
    mean /= static_cast<double>(d);
  }
  for (double v : x) sq += (v - mean) * (v - mean);
  const double scale = m.norm == NormKind::None ? 1.0 : 1.0 / std::sqrt(sq / static_cast<double>(d) + m.norm_eps);
  std::vector<double> dir(static_cast<size_t>(d));  // scale · w ⊙ U[t]   (d)
  const Tensor U = m.unembed.narrow(0, a.token, 1).contiguous();  // (1,d)
  for (int64_t i = 0; i < d; ++i) dir[i] = scale * U.f32()[i] * (m.norm == NormKind::None ? 1.0 : m.norm_f_w.at({i}));
  auto project = [&](const std::vector<double>& c) {
    double centre = 0, s = 0;
    if (m.norm == NormKind::LayerNorm) {
      for (double v : c) centre += v;
      centre /= static_cast<double>(d);
    }
    for (int64_t i = 0; i < d; ++i) s += (c[i] - centre) * dir[i];
    return s;
  };
  const std::vector<double> none(static_cast<size_t>(d), 0.0);
  a.parts.push_back({"tok_embed", project(row_of(w.model.at("tok_embed").out, p))});
  const Step& pos = w.model.at("pos_embed");
  a.parts.push_back({"pos_embed", pos.skipped() ? 0.0 : project(row_of(pos.out, p))});

  for (int64_t l = 0; l < m.layers; ++l) {
    const Trace& t = w.blocks[static_cast<size_t>(l)];
    const std::string name = "layer_" + std::to_string(l) + "/";
    const BlockWeights B = m.block(l);
    const Tensor WO = B.attn.W_O.weight.contiguous();      // (d, h·dk), nn.Linear (out, in)
    const Tensor ctx = t.at("ctx_heads").out.contiguous();  // (1,h,T,dk)
    const int64_t H = ctx.size(1), T = ctx.size(2), dk = ctx.size(3);
    for (int64_t hh = 0; hh < H; ++hh) {
      std::vector<double> o(static_cast<size_t>(d), 0.0);  // W_O[:, hh·dk..] · ctx[hh, p]   (d)
      const float* c = ctx.f32() + (hh * T + p) * dk;
      for (int64_t i = 0; i < d; ++i)
        for (int64_t e = 0; e < dk; ++e) o[i] += static_cast<double>(WO.f32()[i * H * dk + hh * dk + e]) * c[e];
      a.parts.push_back({name + "head_" + std::to_string(hh), project(o)});
    }
    std::vector<double> bias = none;
    if (B.attn.W_O.bias.defined())
      for (int64_t i = 0; i < d; ++i) bias[i] = B.attn.W_O.bias.at({i});
    a.parts.push_back({name + "attn_bias", project(bias)});
    const Step* mlp = t.find("mlp_down");
    a.parts.push_back({name + "mlp", mlp && !mlp->skipped() ? project(row_of(mlp->out, p)) : 0.0});
  }
  double direct = m.unembed_bias.defined() ? m.unembed_bias.at({a.token}) : 0.0;
  if (m.norm == NormKind::LayerNorm)
    for (int64_t i = 0; i < d; ++i) direct += static_cast<double>(m.norm_f_b.at({i})) * U.f32()[i];
  a.parts.push_back({"bias", direct});
  return a;
}

}  // namespace attnsim::model
