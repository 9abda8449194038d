// A language model's held-out measures with their uncertainty (issue 46), for `heads --corpus`:
//   - the model against each counting baseline (ngram.h) as a paired difference per target
//   - the in-context-learning score (ICL, text_task.h) on every held-out window
//   - induction on held-out lines repeated (EOS, r, r), scored on the second copy's rows only,
//     and the behavioural test beside it: the loss on the second copy with the first before
//     it and without it
//
// Standard errors are over blocks, not tokens: the targets of one window (one line) share
// their context and are correlated, so a window (a line) is one observation. For a quantity
// x per target, x̄_b is its mean over block b's targets; the estimate is the mean of x̄_b over
// the B blocks and SE = sd(x̄_b) / √B (sd with B − 1). Every window of text_windows holds T − 1
// targets and every repeated line R − 1, so the estimate is also the mean over targets.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "model/pass/forward.h"
#include "model/training/text_task.h"

namespace attnsim::model {

struct BlockMean {
  double mean = 0, se = 0;  // se: 0 with fewer than 2 blocks
  int64_t blocks = 0;
  bool beyond(double k) const { return blocks > 1 && std::abs(mean) > k * se; }  // |mean| > k·SE
};
BlockMean block_mean(const std::vector<double>& per_block);

// a − b per target (a, b laid out as windows.targets, as evaluate_text's and ngram_baselines'
// `each`), its mean per window, then block_mean over the windows.
BlockMean paired_difference(const Batch& windows, const std::vector<double>& a, const std::vector<double>& b);
// ICL per window (the mean loss at its late positions minus at its early ones,
// icl_positions), then block_mean over the windows; the mean equals evaluate_text's `icl`.
BlockMean icl_over_windows(const Batch& windows, const std::vector<double>& loss);

// Held-out lines of at least R tokens, each as EOS + r + r (r its first R tokens, repeated_text),
// 32 at a time.
struct RepeatedLines {
  int64_t repeat = 0, lines = 0;
  // per head [layer·heads + head]: induction_rows from row R + 1, the second copy's rows
  std::vector<double> second_copy;        // over every line
  std::vector<double> second_copy_log;    // over the first 32: the training log's batch
  // the same rows scored on the copy's own next token only (copy_rows)
  std::vector<double> copy_only, copy_only_log;
  // The behavioural test, on the second copy's predictable tokens r[1..R−1]: their mean loss
  // with the first copy before them (EOS r r) and with the line alone (EOS r), and the paired
  // difference with − alone, over lines (R < 2: none, drop.blocks 0).
  double with_first = 0, alone = 0;
  BlockMean drop;
};
// Throws Error when no held-out line is R tokens long.
RepeatedLines evaluate_repeated_lines(const Model& model, const TextStream& heldout, int64_t repeat);

// Bytes `heads --corpus` holds at its peak, from the config and the corpus's token counts,
// before anything is counted or run: the model, the n-gram counts (ngram.h), the whole split's
// windows and repeated lines with their per-target losses, and the largest forward (16
// windows, or 32 repeated lines).
int64_t predict_text_report_bytes(const ModelConfig& config, int64_t train_tokens, int64_t heldout_tokens);

}  // namespace attnsim::model
