// Head-role scores, per layer and head, from the attention patterns alpha (B,h,T,T).
//
// Pattern scores, after TransformerLens's head detector (transformer_lens/head_detector.py:
// detect_head with its previous-token, duplicate-token and induction detection patterns D):
//   D_prev[i][j]      = 1 when j = i-1
//   D_dup[i][j]       = 1 when j < i and tok[j] = tok[i]
//   D_induction[i][j] = 1 when j ≤ i and tok[j-1] = tok[i]   (the token after an earlier
//                       occurrence of the current one)
//   *_mul    = Σ(A⊙D) / ΣA over every row: TransformerLens's "mul" score. Rows without any
//              target count in the denominator, which caps the induction score on BOS + r + r
//              at about one half.
//   *        = the mean over the rows where D has a target of Σ_j A[i][j]·D[i][j]: the
//              per-target-row score, used for the role labels. On EOS + r + r (repeated_batch,
//              repeated_text) `induction` averages every such row of both copies: the second
//              copy's, and the first copy's rows whose token occurred earlier in r (common in
//              text: "the", "of"); induction_rows below scores the second copy's rows alone.
// The article's shares (mean over query rows i ≥ 1; row 0 sees only itself):
//   diagonal = A[i][i], previous = A[i][i-1], first = A[i][0]; entropy = −Σ_j A log A (nats).
// Weight is not contribution: what position j adds to the residual stream through the head at
// row i is A[i][j]·f_j, f_j = W_O^h v_j (v_j its value row, W_O^h the head's slice of W_O), of
// norm A[i][j]·‖f_j‖ (Kobayashi et al., 2020, "Attention is Not Only a Weight").
// first_contribution = A[i][0]‖f_0‖ / Σ_j A[i][j]‖f_j‖, the same mean over rows i ≥ 1: a sink
// whose f is short takes weight and contributes little.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/pass/forward.h"

namespace attnsim::model {

struct HeadScores {
  double previous = 0, duplicate = 0, induction = 0;              // per target row
  double previous_mul = 0, duplicate_mul = 0, induction_mul = 0;  // TransformerLens "mul"
  double diagonal = 0, previous_share = 0, first = 0;             // the article's shares
  double entropy = 0;
  double first_contribution = 0;                                   // needs the value norms
};

// Scores of one head: patterns A (B,T,T) row-major and the tokens (B,T) they were made on;
// with value_norms (B,T: ‖f_j‖ = ‖W_O^h v_j‖, see above) also first_contribution.
HeadScores score_pattern(const float* A, const int32_t* tokens, int64_t B, int64_t T,
                         const float* value_norms = nullptr);

// The induction score's parts over rows i ≥ `from` of every sequence: the sum over those rows
// that have a D_induction target of Σ_j A[i][j]·D_induction[i][j], and how many rows that is.
// With from = 0, mean() is score_pattern's `induction`; on EOS + r + r with from = R + 1, the
// second copy's rows only. Sums, so that batches add up.
struct RowSum {
  double sum = 0;
  int64_t rows = 0;
  double mean() const { return rows ? sum / static_cast<double>(rows) : 0.0; }
};
RowSum induction_rows(const float* A, const int32_t* tokens, int64_t B, int64_t T, int64_t from);
// On EOS + r + r (T = 2R + 1), the second copy's rows i = R + 1 .. 2R, each scored on the one
// position the copy predicts from: A[i][i − R + 1], the token after the same token's place in
// the first copy (the toy tasks' induction target); other earlier occurrences do not count.
RowSum copy_rows(const float* A, int64_t B, int64_t R);

// Role labels. A head takes the role whose score is highest relative to its threshold,
// when at least one reaches its threshold; "clear" means the score is ≥ 0.7.
//   induction ≥ 0.4, previous-token ≥ 0.4, duplicate-token ≥ 0.4, first-token (share) ≥ 0.5,
//   diagonal (share) ≥ 0.4; otherwise "mixed".
inline constexpr double kInductionThreshold = 0.4, kPreviousThreshold = 0.4, kDuplicateThreshold = 0.4,
                        kFirstThreshold = 0.5, kDiagonalThreshold = 0.4, kClearScore = 0.7;
std::string role_label(const HeadScores& s);
double role_score(const HeadScores& s, const std::string& role);  // the score behind a label

struct HeadTable {
  int64_t layers = 0, heads = 0;
  std::vector<HeadScores> cells;  // [layer * heads + head]
  const HeadScores& at(int64_t l, int64_t h) const { return cells[static_cast<size_t>(l * heads + h)]; }
};
// Runs the model on `batch` (e.g. repeated_batch) and scores every head.
HeadTable score_heads(const Model& model, const Batch& batch, const Ablation* ablation = nullptr);
HeadTable score_heads(const Model& model, const Activations& acts, const Batch& batch);

// ‖f_j‖ = ‖W_O^h v_j‖ of every head at every position of layer `layer`'s trace: (B,h,T),
// row-major; GQA/MQA traces read each query head's K/V group.
std::vector<float> output_norms(const Model& model, const Trace& trace, int64_t layer);
// What each position contributes to each row, as a share: C[i][j] = A[i][j]‖f_j‖ / Σ_j
// A[i][j]‖f_j‖, for alpha (B,h,T,T) and its output_norms; a row whose mass is 0 stays 0. Rows
// sum to 1 like alpha's, so the two draw on one scale.
Tensor contribution_pattern(const Tensor& alpha, const std::vector<float>& norms);

// The standard scoring batch: BOS + r + r with the longest r the model's positions allow
// (at most 20), 64 sequences, a fixed seed.
Batch scoring_batch(const ModelConfig& config);
// Bytes scoring_batch's forward holds (64 sequences of BOS + r + r), predicted from the config.
int64_t predict_scoring_bytes(const ModelConfig& config);

}  // namespace attnsim::model
