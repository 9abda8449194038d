#include "model/training/heads.h"

#include <algorithm>
#include <cmath>

#include "model/training/tasks.h"

namespace attnsim::model {

HeadScores score_pattern(const float* A, const int32_t* tokens, int64_t B, int64_t T, const float* value_norms) {
  HeadScores s;
  double sum_a = 0;                                  // ΣA over every row (the "mul" denominator)
  double mul[3] = {0, 0, 0}, per[3] = {0, 0, 0};     // previous, duplicate, induction
  int64_t rows_with[3] = {0, 0, 0};
  int64_t share_rows = 0;
  for (int64_t b = 0; b < B; ++b) {
    const int32_t* tok = tokens + b * T;
    for (int64_t i = 0; i < T; ++i) {
      const float* a = A + (b * T + i) * T;
      double hit[3] = {0, 0, 0};
      bool has[3] = {i >= 1, false, false};
      for (int64_t j = 0; j <= i; ++j) {
        sum_a += a[j];
        if (j == i - 1) hit[0] += a[j];
        if (j < i && tok[j] == tok[i]) hit[1] += a[j], has[1] = true;
        if (j >= 1 && tok[j - 1] == tok[i]) hit[2] += a[j], has[2] = true;
      }
      for (int k = 0; k < 3; ++k) {
        mul[k] += hit[k];
        if (has[k]) per[k] += hit[k], rows_with[k] += 1;
      }
      if (i == 0) continue;
      ++share_rows;
      s.diagonal += a[i];
      s.previous_share += a[i - 1];
      s.first += a[0];
      double h = 0;
      for (int64_t j = 0; j <= i; ++j)
        if (a[j] > 0) h -= a[j] * std::log(static_cast<double>(a[j]));
      s.entropy += h;
      if (value_norms) {
        const float* vn = value_norms + b * T;
        double mass = 0;
        for (int64_t j = 0; j <= i; ++j) mass += static_cast<double>(a[j]) * vn[j];
        if (mass > 0) s.first_contribution += static_cast<double>(a[0]) * vn[0] / mass;
      }
    }
  }
  auto ratio = [](double x, double n) { return n > 0 ? x / n : 0.0; };
  s.previous_mul = ratio(mul[0], sum_a);
  s.duplicate_mul = ratio(mul[1], sum_a);
  s.induction_mul = ratio(mul[2], sum_a);
  s.previous = ratio(per[0], static_cast<double>(rows_with[0]));
  s.duplicate = ratio(per[1], static_cast<double>(rows_with[1]));
  s.induction = ratio(per[2], static_cast<double>(rows_with[2]));
  const double n = static_cast<double>(share_rows);
  s.diagonal = ratio(s.diagonal, n);
  s.previous_share = ratio(s.previous_share, n);
  s.first = ratio(s.first, n);
  s.entropy = ratio(s.entropy, n);
  s.first_contribution = ratio(s.first_contribution, n);
  return s;
}

RowSum induction_rows(const float* A, const int32_t* tokens, int64_t B, int64_t T, int64_t from) {
  RowSum r;
  for (int64_t b = 0; b < B; ++b) {
    const int32_t* tok = tokens + b * T;
    for (int64_t i = std::max<int64_t>(from, 0); i < T; ++i) {
      const float* a = A + (b * T + i) * T;
      double hit = 0;
      bool has = false;
      for (int64_t j = 1; j <= i; ++j)  // D_induction[i][j] = 1 when tok[j-1] = tok[i]
        if (tok[j - 1] == tok[i]) hit += a[j], has = true;
      if (has) r.sum += hit, ++r.rows;
    }
  }
  return r;
}

RowSum copy_rows(const float* A, int64_t B, int64_t R) {
  const int64_t T = 2 * R + 1;
  RowSum r;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = R + 1; i < T; ++i) r.sum += A[(b * T + i) * T + (i - R + 1)], ++r.rows;
  return r;
}

namespace {
struct Role {
  const char* name;
  double HeadScores::*score;
  double threshold;
};
const Role kRoles[] = {{"induction", &HeadScores::induction, kInductionThreshold},
                       {"previous-token", &HeadScores::previous, kPreviousThreshold},
                       {"duplicate-token", &HeadScores::duplicate, kDuplicateThreshold},
                       {"first-token", &HeadScores::first, kFirstThreshold},
                       {"diagonal", &HeadScores::diagonal, kDiagonalThreshold}};
}  // namespace

std::string role_label(const HeadScores& s) {
  const Role* best = nullptr;
  for (const Role& r : kRoles)
    if (s.*r.score >= r.threshold && (!best || s.*r.score / r.threshold > s.*best->score / best->threshold)) best = &r;
  return best ? best->name : "mixed";
}

double role_score(const HeadScores& s, const std::string& role) {
  for (const Role& r : kRoles)
    if (role == r.name) return s.*r.score;
  return 0.0;
}

std::vector<float> output_norms(const Model& model, const Trace& trace, int64_t layer) {
  const ModelConfig& c = model.config;
  // (B,g,T,dk), a view of v_proj: read through strides; query head hh reads K/V head
  // hh / (h/g) (the engine's consecutive groups).
  const Tensor& v = trace.at("v_heads").out;
  const int64_t B = v.size(0), T = v.size(2), h = c.heads, group = h / v.size(1), d = c.d_model, dk = c.head_dim();
  // W_O (d, d), nn.Linear's (out, in): head hh's slice is columns hh·dk .. hh·dk + dk − 1
  const Tensor wo = model.params.get("layers." + std::to_string(layer) + ".attn.W_O.weight").contiguous();
  const auto& st = v.strides();
  std::vector<float> norms(static_cast<size_t>(B * h * T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t t = 0; t < T; ++t) {
        const float* row = v.f32() + b * st[0] + (hh / group) * st[1] + t * st[2];
        double sq = 0;
        for (int64_t o = 0; o < d; ++o) {  // (W_O's head slice · v)[o]
          const float* w = wo.f32() + o * d + hh * dk;
          double y = 0;
          for (int64_t k = 0; k < dk; ++k) y += static_cast<double>(w[k]) * row[k * st[3]];
          sq += y * y;
        }
        norms[static_cast<size_t>((b * h + hh) * T + t)] = static_cast<float>(std::sqrt(sq));
      }
  return norms;
}

Tensor contribution_pattern(const Tensor& alpha, const std::vector<float>& norms) {
  const Tensor a = alpha.contiguous();
  const int64_t rows = a.size(0) * a.size(1), T = a.size(2);
  Tensor c = Tensor::zeros(a.shape());
  for (int64_t r = 0; r < rows; ++r) {
    const float* n = norms.data() + r * T;
    for (int64_t i = 0; i < T; ++i) {
      const float* in = a.f32() + (r * T + i) * T;
      float* out = c.f32() + (r * T + i) * T;
      double mass = 0;
      for (int64_t j = 0; j < T; ++j) mass += static_cast<double>(in[j]) * n[j];
      if (mass > 0)
        for (int64_t j = 0; j < T; ++j) out[j] = static_cast<float>(static_cast<double>(in[j]) * n[j] / mass);
    }
  }
  return c;
}

HeadTable score_heads(const Model& model, const Activations& acts, const Batch& batch) {
  const ModelConfig& c = model.config;
  HeadTable table;
  table.layers = c.layers;
  table.heads = c.heads;
  const int64_t B = batch.batch, T = batch.len, h = c.heads;
  for (int64_t l = 0; l < c.layers; ++l) {
    const Trace& trace = acts.layers[static_cast<size_t>(l)].attn;
    const Tensor& alpha = trace.at("alpha").out;  // (B,h,T,T) contiguous
    const std::vector<float> all_norms = output_norms(model, trace, l);  // (B,h,T)
    std::vector<float> one(static_cast<size_t>(B * T * T)), norms(static_cast<size_t>(B * T));
    for (int64_t hh = 0; hh < h; ++hh) {
      for (int64_t b = 0; b < B; ++b) {
        std::copy_n(alpha.f32() + (b * h + hh) * T * T, T * T, one.data() + b * T * T);
        std::copy_n(all_norms.data() + (b * h + hh) * T, T, norms.data() + b * T);
      }
      table.cells.push_back(score_pattern(one.data(), batch.tokens.data(), B, T, norms.data()));
    }
  }
  return table;
}

HeadTable score_heads(const Model& model, const Batch& batch, const Ablation* ablation) {
  return score_heads(model, forward_finite(model, batch, ablation), batch);
}

int64_t predict_scoring_bytes(const ModelConfig& c) {
  const int64_t repeat = std::max<int64_t>(1, std::min<int64_t>({20, (c.seq_len - 1) / 2, c.vocab - 1}));
  return predict_forward_bytes(c, 64, 2 * repeat + 1);
}

Batch scoring_batch(const ModelConfig& c) {
  const int64_t repeat = std::min<int64_t>({20, (c.seq_len - 1) / 2, c.vocab - 1});
  return repeated_batch(c.vocab, repeat, 64, 12345);
}

}  // namespace attnsim::model
