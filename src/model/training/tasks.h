// Built-in tasks: token sequences the program makes itself, seeded and deterministic.
//
//   induction   BOS, r1 r1, r2 r2, ...  each r: L distinct tokens shown twice, with one L per
//               sequence drawn from [min_repeat, max_repeat] less holdout_repeats; pairs
//               follow each other to the end (the last may be cut short) and no token is
//               reused while the vocabulary lasts. Every token of a second copy after its
//               first is predictable by looking up its earlier occurrence and copying what
//               followed it (an induction head); first copies are random. One L per
//               sequence, so short repeats also come many to a sequence and reach the late
//               positions (with one L per pair, a model trained on 2..23 failed past
//               position ~32 on sequences of short repeats).
//   copy-prev   BOS, random tokens      position t must output the token at t-1: a
//               previous-token head solves it in one layer.
//   recall      BOS, k1 v1 .. kP vP, q a, q a, ...   associative recall: P pairs with distinct
//               keys k from the lower half of the vocabulary (1..K, K = (vocab-1)/2) and random
//               values v from the upper half (K+1..vocab-1), then queries to the end: each q is
//               a stored key (every key once before any repeats) and a is its value. The answer
//               a is one exact token that sits up to 2P positions back: it must be looked up.
//   gist        BOS, x1 .. x2P, q a, q a, ...   the same length and vocabulary: 2P context
//               tokens from the two halves, n of them from the lower half with n drawn from
//               0..2P less P (never a tie), then queries to the end: q is a context token
//               picked at random and a names the majority half of the context (token 1 for the
//               lower, K+1 for the upper; chance 1/2). The answer depends on a count over the
//               whole context, not on one position: a uniform average is enough. Every answer
//               after the first can be copied from the one before, so the first has its own part.
//   text        EOS, a window of a tokenized corpus (text_task.h): language modelling; needs
//               TaskSpec::text and is the only task of its run.
// Every sequence starts with BOS (token 0; text: EOS), so first-token ("sink") heads can form.
// Position t's target is what it must predict; its part says where that target sits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/pass/forward.h"
#include "model/training/text_task.h"

namespace attnsim::model {


enum class Task { Induction, CopyPrev, Recall, Gist, Text };
const char* task_name(Task task);
std::optional<Task> find_task(const std::string& name);  // nullopt for an unknown name
Task parse_task(const std::string& name);                // throws Error listing the valid names

struct TaskSpec {
  std::vector<Task> tasks{Task::Induction};  // sequence b uses tasks[b % size]
  int64_t vocab = 65;                        // tokens 1..vocab-1, plus BOS = 0
  int64_t len = 48;                          // tokens per sequence, BOS included
  int64_t min_repeat = 8, max_repeat = 19;   // induction's segment length range
  std::vector<int64_t> holdout_repeats;      // lengths in that range never drawn: unseen at test time
  int64_t pairs = 12;                        // recall / gist: key-value pairs (2·pairs context tokens)
  std::shared_ptr<const TextStream> text;    // text: the tokenized training corpus
  // text: every Nth window of a batch (rows N-1, 2N-1, ...) repeats a span of its own text of
  // min_repeat..max_repeat tokens (text_task.h), so that induction has something to learn;
  // 0 = never (natural text only)
  int64_t text_repeat_every = 0;

  bool trains_on(int64_t repeat) const;  // in [min_repeat, max_repeat] and not held out
};
void validate(const TaskSpec& spec);  // throws Error: 2·max_repeat+1 > len, too few tokens, ...
bool uses_pairs(const std::vector<Task>& tasks);  // recall or gist among them (TaskSpec::pairs applies)
// recall / gist split tokens 1..vocab-1 in two halves: keys (the lower, 1..K) and values (the
// upper, K+1..vocab-1), K = (vocab-1)/2. Recall's answers are values: vocab-1-K of them.
int64_t key_tokens(int64_t vocab);
int64_t value_tokens(int64_t vocab);

// Batch number `index` of a run with this seed: the same arguments give the same batch.
Batch make_batch(const TaskSpec& spec, int64_t batch, uint64_t seed, uint64_t index);

// BOS + r + r with r of `repeat` distinct random tokens: the sequences the head-role scores
// are measured on (len = 2·repeat + 1).
Batch repeated_batch(int64_t vocab, int64_t repeat, int64_t batch, uint64_t seed);


}  // namespace attnsim::model
