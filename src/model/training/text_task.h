// The language-model task (issue 36): windows of a tokenized corpus, one line a document.
//
//   stream   EOS l1 EOS l2 EOS l3 ...     every line of the corpus encoded by the model's own
//                                         tokenizer, each after an end-of-text token (GPT-2's
//                                         document separator), so every window starts with one
//   window   stream[s .. s+T)             s a line start (an EOS) drawn from the batch's
//                                         counter-based seed; the window runs across later
//                                         lines, so a gloss sees its neighbours as context
//
// Position 0 is always EOS, which lets first-token ("sink") heads form as BOS does in the
// built-in tasks. The held-out split is read as consecutive windows from its first line, the
// same for every run, so the runs of a recipe are measured on the same tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/pass/forward.h"

namespace attnsim::model {

namespace hf {
class Tokenizer;
}

struct TextStream {
  std::vector<int32_t> tokens;  // EOS l1 EOS l2 ...
  std::vector<int64_t> starts;  // the index of each EOS, in order
  int32_t eos = 0;
  int64_t vocab = 0;            // the tokenizer's size: every token is below it
  // provenance, written into the recipe (train.cpp) and checked when a run is repeated
  std::string name;             // "train.txt"
  std::string sha256;           // of the corpus file's bytes
  std::string tokenizer_sha256; // of tokenizer.json's bytes
};

// Encodes `text` line by line ('\n' ends a line; empty lines are skipped). Throws Error when the
// tokenizer has no "<|endoftext|>" or the text has no lines.
TextStream tokenize_lines(const hf::Tokenizer& tokenizer, const std::string& text);

// The held-out sample that ships (assets/corpus/wordnet-heldout-sample.txt: the first 256 lines
// of the held-out split), which the app's model view and the lessons measure a language model on.
std::string heldout_sample_path();

// Row b of batch `index`: a window of T tokens from a line start, targets the next tokens (the
// last position has none), part kOther. Throws Error when no line starts T tokens before the end.
void text_row(Batch& out, int64_t b, const TextStream& stream, uint64_t seed, uint64_t index);

// Row b as text_row's window, with a span of its own text repeated (induction on real words):
//   EOS x1..xk x1..xk y1 y2 ...   x the k tokens after the line start, k drawn from
//                                 [min_repeat, max_repeat]; y the text after x, to the end
// Targets of the first copy are kFirst, the second copy's first kRepeatStart, its rest kRepeat
// (predictable by copying), the text after it kOther.
void text_repeat_row(Batch& out, int64_t b, const TextStream& stream, int64_t min_repeat, int64_t max_repeat,
                     uint64_t seed, uint64_t index);

// Up to `count` consecutive windows of T tokens of the stream, each from the first line start
// at or after the previous window's end: the held-out evaluation's fixed batch.
Batch text_windows(const TextStream& stream, int64_t T, int64_t count);

// EOS + r + r, r the first `repeat` tokens of the line of each window above (lines shorter
// than `repeat` are passed over): real text repeated, where induction heads show, as
// scoring_batch's random tokens do for the built-in tasks.
Batch repeated_text(const TextStream& stream, int64_t repeat, int64_t count);

// Held-out evaluation of a language model: the loss per token over every target, and the
// in-context-learning score (ICL) of Olsson et al. (2022): the mean loss of targets at late
// positions minus that at early ones (negative: later tokens are predicted better, because
// the context says more).
struct IclPositions {
  int64_t early_from, early_to, late_from;  // early [T/12, T/6), late [3T/4, T−1): T = 128
};                                          // gives 10..20 and 96..126
IclPositions icl_positions(int64_t T);
struct TextEval {
  double loss = 0;                    // nats per token, all targets
  double early = 0, late = 0, icl = 0; // mean loss at the early and late positions; late − early
  int64_t tokens = 0;                 // targets scored
};
// With `each`, also −ln p of every target, laid out as windows.targets (B·T; 0 where there is
// none): what the paired comparisons and ICL's standard error (experiments/text_measures.h) read.
TextEval evaluate_text(const Model& model, const Batch& windows, std::vector<double>* each = nullptr);

// The counting baselines (unigram, bigram, trigram) on the same targets: model/experiments/ngram.h.

}  // namespace attnsim::model
