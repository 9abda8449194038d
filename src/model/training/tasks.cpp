#include "model/training/tasks.h"

#include <algorithm>
#include <numeric>

#include "engine/error.h"
#include "engine/random.h"

namespace attnsim::model {

namespace {

// A small counter-based generator: stream (seed, index, b) gives one sequence's draws.
struct Rng {
  uint64_t state;
  uint64_t next() { return state = mix64(state); }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

Rng rng_for(uint64_t seed, uint64_t index, int64_t b) {
  return Rng{random_bits(seed, 0x7A5C0000u + static_cast<uint64_t>(b), index)};
}

// k distinct tokens from 1..vocab-1 (a partial Fisher-Yates shuffle).
std::vector<int32_t> distinct_tokens(Rng& rng, int64_t vocab, int64_t k) {
  std::vector<int32_t> pool(static_cast<size_t>(vocab - 1));
  std::iota(pool.begin(), pool.end(), 1);
  for (int64_t i = 0; i < k; ++i) std::swap(pool[i], pool[i + rng.below(vocab - 1 - i)]);
  pool.resize(static_cast<size_t>(k));
  return pool;
}

// Fills one row: tokens, then next-token targets with the part of each target.
void fill_row(Batch& out, int64_t b, const std::vector<int32_t>& tokens, const std::vector<uint8_t>& token_part) {
  const int64_t T = out.len;
  for (int64_t t = 0; t < T; ++t) {
    out.tokens[b * T + t] = tokens[t];
    const bool last = t + 1 == T;
    out.targets[b * T + t] = last ? -1 : tokens[t + 1];
    out.part[b * T + t] = last ? uint8_t{kOther} : token_part[t + 1];
  }
}

// Pairs r r, r' r', ... of one drawn length until the sequence is full (the last pair may be
// cut short). A token is not reused until the vocabulary runs out, so an earlier occurrence
// is unique.
void induction_row(Batch& out, int64_t b, const TaskSpec& s, const std::vector<int64_t>& lengths, Rng& rng) {
  std::vector<int32_t> tokens{0};
  std::vector<uint8_t> part{kOther};
  std::vector<int32_t> fresh;  // tokens not used yet in this sequence
  const int64_t L = lengths[static_cast<size_t>(rng.below(static_cast<int64_t>(lengths.size())))];
  while (static_cast<int64_t>(tokens.size()) < s.len) {
    if (static_cast<int64_t>(fresh.size()) < L) fresh = distinct_tokens(rng, s.vocab, s.vocab - 1);
    const std::vector<int32_t> r(fresh.end() - L, fresh.end());
    fresh.resize(fresh.size() - static_cast<size_t>(L));
    for (int64_t i = 0; i < 2 * L && static_cast<int64_t>(tokens.size()) < s.len; ++i) {
      tokens.push_back(r[i % L]);
      part.push_back(i < L ? kFirst : i == L ? kRepeatStart : kRepeat);
    }
  }
  fill_row(out, b, tokens, part);
}

void copy_prev_row(Batch& out, int64_t b, const TaskSpec& s, Rng& rng) {
  const int64_t T = s.len;
  std::vector<int32_t> tokens{0};
  for (int64_t t = 1; t < T; ++t) tokens.push_back(static_cast<int32_t>(1 + rng.below(s.vocab - 1)));
  for (int64_t t = 0; t < T; ++t) {
    out.tokens[b * T + t] = tokens[t];
    out.targets[b * T + t] = t == 0 ? -1 : tokens[t - 1];
    out.part[b * T + t] = t == 0 ? kOther : kCopy;
  }
}

// BOS, k1 v1 .. kP vP (distinct keys, random values), then q a pairs to the end: q a stored key,
// every key once (in random order) before any is asked again, a its value (part kRecall).
void recall_row(Batch& out, int64_t b, const TaskSpec& s, Rng& rng) {
  const int64_t K = key_tokens(s.vocab), P = s.pairs;
  const std::vector<int32_t> keys = distinct_tokens(rng, K + 1, P);  // P distinct tokens of 1..K
  std::vector<int32_t> values;
  for (int64_t i = 0; i < P; ++i) values.push_back(static_cast<int32_t>(K + 1 + rng.below(s.vocab - 1 - K)));
  std::vector<int32_t> tokens{0};
  std::vector<uint8_t> part{kOther};
  for (int64_t i = 0; i < P; ++i) {
    tokens.insert(tokens.end(), {keys[i], values[i]});
    part.insert(part.end(), {kOther, kOther});
  }
  std::vector<int32_t> order;  // indices of the keys still to ask in this round
  while (static_cast<int64_t>(tokens.size()) < s.len) {
    if (order.empty()) {
      order = distinct_tokens(rng, P + 1, P);  // a permutation of 1..P
      for (int32_t& i : order) --i;
    }
    const int32_t i = order.back();
    order.pop_back();
    tokens.push_back(keys[i]);
    part.push_back(kOther);  // which key is asked is random
    if (static_cast<int64_t>(tokens.size()) == s.len) break;
    tokens.push_back(values[i]);
    part.push_back(kRecall);
  }
  fill_row(out, b, tokens, part);
}

// BOS, 2P context tokens with n from the lower half (n drawn from 0..2P less P, so one half is
// always the majority), then q a pairs to the end: q a context token picked at random, a = 1 when
// the lower half is the majority, K+1 when the upper one is (parts kGistFirst, then kGist).
void gist_row(Batch& out, int64_t b, const TaskSpec& s, Rng& rng) {
  const int64_t K = key_tokens(s.vocab), P = s.pairs;
  int64_t n = rng.below(2 * P);  // 0..2P-1, then P..2P-1 shifted up: 0..2P without P
  if (n >= P) ++n;
  std::vector<int32_t> context;
  for (int64_t i = 0; i < 2 * P; ++i)
    context.push_back(static_cast<int32_t>(i < n ? 1 + rng.below(K) : K + 1 + rng.below(s.vocab - 1 - K)));
  for (int64_t i = 2 * P - 1; i > 0; --i) std::swap(context[i], context[rng.below(i + 1)]);  // Fisher-Yates
  const int32_t answer = static_cast<int32_t>(n > P ? 1 : K + 1);
  std::vector<int32_t> tokens{0};
  tokens.insert(tokens.end(), context.begin(), context.end());
  std::vector<uint8_t> part(tokens.size(), kOther);
  bool first = true;
  while (static_cast<int64_t>(tokens.size()) < s.len) {
    tokens.push_back(context[rng.below(2 * P)]);
    part.push_back(kOther);
    if (static_cast<int64_t>(tokens.size()) == s.len) break;
    tokens.push_back(answer);
    part.push_back(first ? kGistFirst : kGist);
    first = false;
  }
  fill_row(out, b, tokens, part);
}

Batch empty_batch(int64_t B, int64_t T) {
  Batch out;
  out.batch = B;
  out.len = T;
  const size_t n = static_cast<size_t>(B * T);
  out.tokens.assign(n, 0);
  out.targets.assign(n, -1);
  out.part.assign(n, kOther);
  return out;
}

// The segment lengths a run draws from, shortest first.
std::vector<int64_t> training_lengths(const TaskSpec& s) {
  std::vector<int64_t> lengths;
  for (int64_t L = s.min_repeat; L <= s.max_repeat; ++L)
    if (s.trains_on(L)) lengths.push_back(L);
  return lengths;
}

}  // namespace

const char* task_name(Task task) {
  switch (task) {
    case Task::Induction: return "induction";
    case Task::CopyPrev: return "copy-prev";
    case Task::Recall: return "recall";
    case Task::Gist: return "gist";
    case Task::Text: return "text";
  }
  return "?";
}

std::optional<Task> find_task(const std::string& name) {
  for (Task t : {Task::Induction, Task::CopyPrev, Task::Recall, Task::Gist, Task::Text})
    if (name == task_name(t)) return t;
  return std::nullopt;
}

Task parse_task(const std::string& name) {
  if (const std::optional<Task> t = find_task(name)) return *t;
  throw Error("unknown task '" + name + "' (valid: induction, copy-prev, recall, gist, text)");
}

bool uses_pairs(const std::vector<Task>& tasks) {
  return std::find(tasks.begin(), tasks.end(), Task::Recall) != tasks.end() ||
         std::find(tasks.begin(), tasks.end(), Task::Gist) != tasks.end();
}

bool TaskSpec::trains_on(int64_t repeat) const {
  return repeat >= min_repeat && repeat <= max_repeat &&
         std::find(holdout_repeats.begin(), holdout_repeats.end(), repeat) == holdout_repeats.end();
}

void validate(const TaskSpec& s) {
  if (s.tasks.empty()) throw Error("no task given");
  if (s.vocab < 3) throw Error("a task needs at least 2 tokens besides BOS (vocab >= 3)");
  if (s.len < 2) throw Error("sequences need at least 2 tokens");
  if (std::find(s.tasks.begin(), s.tasks.end(), Task::Text) != s.tasks.end()) {
    if (s.tasks.size() != 1) throw Error("the text task trains alone: it cannot be mixed with built-in tasks");
    if (!s.text) throw Error("the text task needs a corpus (--corpus)");
    if (s.text->vocab != s.vocab)
      throw Error("the tokenizer has " + std::to_string(s.text->vocab) + " tokens, the model's vocabulary " +
                  std::to_string(s.vocab) + ": they must be the same");
    if (s.text_repeat_every < 0 || s.text_repeat_every > (1 << 20))
      throw Error("text_repeat_every must be in 0..1048576, got " + std::to_string(s.text_repeat_every));
    if (s.text_repeat_every > 0 && (s.min_repeat < 1 || s.min_repeat > s.max_repeat || 2 * s.max_repeat + 1 > s.len))
      throw Error("a repeated span of " + std::to_string(s.min_repeat) + ".." + std::to_string(s.max_repeat) +
                  " tokens, twice after the end-of-text token, must fit the window of " + std::to_string(s.len));
    return;
  }
  if (uses_pairs(s.tasks)) {
    const int64_t K = key_tokens(s.vocab);
    if (s.pairs < 1 || s.pairs > K)
      throw Error("recall / gist need 1.." + std::to_string(K) + " pairs (distinct keys from the lower half of " +
                  std::to_string(s.vocab) + " tokens), got " + std::to_string(s.pairs));
    if (2 * s.pairs + 3 > s.len)
      throw Error(std::to_string(s.pairs) + " pairs plus BOS and one query need " + std::to_string(2 * s.pairs + 3) +
                  " positions, the sequence has " + std::to_string(s.len));
  }
  for (Task t : s.tasks) {
    if (t != Task::Induction) continue;
    if (s.min_repeat < 1 || s.min_repeat > s.max_repeat)
      throw Error("repeat lengths must satisfy 1 <= min <= max, got " + std::to_string(s.min_repeat) + ".." +
                  std::to_string(s.max_repeat));
    if (2 * s.max_repeat + 1 > s.len)
      throw Error("a repeat of " + std::to_string(s.max_repeat) + " tokens twice plus BOS needs " +
                  std::to_string(2 * s.max_repeat + 1) + " positions, the sequence has " + std::to_string(s.len));
    if (s.max_repeat > s.vocab - 1)
      throw Error("a segment of " + std::to_string(s.max_repeat) + " distinct tokens needs a vocabulary of at least " +
                  std::to_string(s.max_repeat + 1));
    for (int64_t L : s.holdout_repeats)
      if (L < s.min_repeat || L > s.max_repeat)
        throw Error("held-out repeat length " + std::to_string(L) + " is outside the training range " +
                    std::to_string(s.min_repeat) + ".." + std::to_string(s.max_repeat));
    if (training_lengths(s).empty()) throw Error("every repeat length is held out: nothing left to train on");
  }
}

Batch make_batch(const TaskSpec& s, int64_t B, uint64_t seed, uint64_t index) {
  validate(s);
  Batch out = empty_batch(B, s.len);
  const std::vector<int64_t> lengths = training_lengths(s);
  for (int64_t b = 0; b < B; ++b) {
    Rng rng = rng_for(seed, index, b);
    switch (s.tasks[static_cast<size_t>(b) % s.tasks.size()]) {
      case Task::Induction: induction_row(out, b, s, lengths, rng); break;
      case Task::CopyPrev: copy_prev_row(out, b, s, rng); break;
      case Task::Recall: recall_row(out, b, s, rng); break;
      case Task::Gist: gist_row(out, b, s, rng); break;
      case Task::Text:
        if (s.text_repeat_every > 0 && b % s.text_repeat_every == s.text_repeat_every - 1)
          text_repeat_row(out, b, *s.text, s.min_repeat, s.max_repeat, seed, index);
        else
          text_row(out, b, *s.text, seed, index);
        break;
    }
  }
  return out;
}

Batch repeated_batch(int64_t vocab, int64_t repeat, int64_t B, uint64_t seed) {
  if (repeat < 1 || repeat > vocab - 1)
    throw Error("a repeated segment needs 1.." + std::to_string(vocab - 1) + " distinct tokens, got " +
                std::to_string(repeat));
  TaskSpec s;
  s.vocab = vocab;
  s.len = 2 * repeat + 1;
  s.min_repeat = s.max_repeat = repeat;
  Batch out = empty_batch(B, s.len);
  for (int64_t b = 0; b < B; ++b) {
    Rng rng = rng_for(seed, 0xBEEF, b);
    induction_row(out, b, s, {repeat}, rng);
  }
  return out;
}

int64_t key_tokens(int64_t vocab) { return (vocab - 1) / 2; }
int64_t value_tokens(int64_t vocab) { return vocab - 1 - key_tokens(vocab); }

}  // namespace attnsim::model
