// The language-model task (src/model/training/text_task.h): the stream's layout, windows from line
// starts, the held-out windows and repeated lines, the counting baselines against a hand
// count, the held-out loss against cross_entropy, and the task's refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <algorithm>
#include <set>

#include "engine/error.h"
#include "model/text/hf_bpe_train.h"
#include "model/text/hf_tokenizer.h"
#include "model/pass/forward.h"
#include "model/training/backward.h"
#include "model/training/tasks.h"
#include "model/experiments/ngram.h"
#include "model/experiments/repeat_prompts.h"
#include "model/experiments/text_ablation.h"
#include "model/training/text_task.h"
#include "model/training/train.h"

using namespace attnsim;
using namespace attnsim::model;

namespace {

// A byte-level BPE with no merges: token = byte, <|endoftext|> = 256.
hf::Tokenizer byte_tokenizer() {
  return hf::parse_tokenizer_json(hf::tokenizer_json(hf::train_bpe("ab", 1)), "test tokenizer");
}

// GPT-2's form over bytes and <|endoftext|> (257 tokens), small: T positions, H heads.
ModelConfig byte_lm(int64_t T, int64_t H) {
  ModelConfig c;
  c.vocab = 257;
  c.seq_len = T;
  c.d_model = 16;
  c.heads = H;
  c.layernorm = c.mlp = c.tied = true;
  return c;
}

}  // namespace

TEST_CASE("the text stream is EOS before every line, empty lines skipped", "[model][text]") {
  const hf::Tokenizer tok = byte_tokenizer();
  const TextStream s = tokenize_lines(tok, "ab\n\ncd e\n");
  REQUIRE(s.eos == 256);
  CHECK(s.vocab == 257);
  std::vector<int32_t> want{256, 'a', 'b', 256, 'c', 'd', ' ', 'e'};
  CHECK(s.tokens == want);
  CHECK(s.starts == std::vector<int64_t>{0, 3});
  CHECK_THROWS_WITH(tokenize_lines(tok, "\n\n"), Catch::Contains("no lines"));
}

TEST_CASE("text windows start at a line start, are repeatable and shift targets by one", "[model][text]") {
  const hf::Tokenizer tok = byte_tokenizer();
  std::string text;
  for (int i = 0; i < 40; ++i) text += "line " + std::to_string(i) + " of text\n";
  auto stream = std::make_shared<TextStream>(tokenize_lines(tok, text));
  TaskSpec spec;
  spec.tasks = {Task::Text};
  spec.vocab = 257;
  spec.len = 24;
  spec.text = stream;
  const Batch a = make_batch(spec, 8, 3, 17), b = make_batch(spec, 8, 3, 17), c = make_batch(spec, 8, 3, 18);
  CHECK(a.tokens == b.tokens);
  CHECK(a.tokens != c.tokens);
  std::set<std::vector<int32_t>> distinct;
  for (int64_t r = 0; r < 8; ++r) {
    CHECK(a.tokens[r * 24] == 256);  // every window opens on EOS
    for (int64_t t = 0; t + 1 < 24; ++t) CHECK(a.targets[r * 24 + t] == a.tokens[r * 24 + t + 1]);
    CHECK(a.targets[r * 24 + 23] == -1);
    distinct.insert({a.tokens.begin() + r * 24, a.tokens.begin() + r * 24 + 24});
  }
  CHECK(distinct.size() > 1);
  spec.len = static_cast<int64_t>(stream->tokens.size()) + 1;  // longer than the corpus
  CHECK_THROWS_WITH(make_batch(spec, 1, 1, 0), Catch::Contains("fewer than one window"));
}

TEST_CASE("every Nth text window repeats a span of its own text: EOS x x y, parts marking the copy", "[model][text]") {
  const hf::Tokenizer tok = byte_tokenizer();
  std::string text;
  for (int i = 0; i < 40; ++i) text += "line " + std::to_string(i) + " of a longer text to repeat\n";
  TaskSpec spec;
  spec.tasks = {Task::Text};
  spec.vocab = 257;
  spec.len = 32;
  spec.min_repeat = 3;
  spec.max_repeat = 9;
  spec.text = std::make_shared<TextStream>(tokenize_lines(tok, text));
  const Batch plain = make_batch(spec, 8, 5, 2);
  spec.text_repeat_every = 4;
  const Batch rep = make_batch(spec, 8, 5, 2);
  const int64_t T = 32;
  std::set<int64_t> lengths;
  for (int64_t r = 0; r < 8; ++r) {
    const int32_t* w = plain.tokens.data() + r * T;  // the window the row was drawn as
    const int32_t* got = rep.tokens.data() + r * T;
    INFO("row " << r);
    if (r % 4 != 3) {  // rows 0-2, 4-6: the plain windows, untouched
      CHECK(std::equal(w, w + T, got));
      continue;
    }
    int64_t k = 0;  // the copy's length: the first part after kFirst
    while (rep.part[r * T + k] == kFirst) ++k;
    lengths.insert(k);
    CHECK(k >= 3);
    CHECK(k <= 9);
    CHECK(got[0] == 256);
    for (int64_t t = 1; t <= k; ++t) CHECK(got[t] == w[t]);        // x as it was
    for (int64_t t = 1; t <= k; ++t) CHECK(got[k + t] == w[t]);    // x again
    for (int64_t t = 2 * k + 1; t < T; ++t) CHECK(got[t] == w[t - k]);  // then the text after x
    CHECK(rep.part[r * T + k] == kRepeatStart);
    for (int64_t t = k + 1; t < 2 * k; ++t) CHECK(rep.part[r * T + t] == kRepeat);
    for (int64_t t = 2 * k; t < T; ++t) CHECK(rep.part[r * T + t] == kOther);
    for (int64_t t = 0; t + 1 < T; ++t) CHECK(rep.targets[r * T + t] == got[t + 1]);
    CHECK(rep.targets[r * T + T - 1] == -1);
  }
  CHECK(!lengths.empty());
  spec.max_repeat = 16;  // EOS + 2·16 = 33 > 32 positions
  CHECK_THROWS_WITH(make_batch(spec, 4, 5, 2), Catch::Contains("must fit the window of 32"));
}

TEST_CASE("repeat prompts: the expected word's probability and rank are the last position's softmax", "[model][text]") {
  const hf::Tokenizer tok = byte_tokenizer();  // a byte per token: " mat" is scored on ' '
  Model m = init_model(byte_lm(96, 2));
  const std::vector<PromptResult> got = run_repeat_prompts(m, tok);
  REQUIRE(got.size() == repeat_prompts().size());
  CHECK(got[0].prompt.text == "the cat sat on the mat. the cat sat on the");
  CHECK(got[0].prompt.expected == " mat");
  for (const PromptResult& r : got) {
    std::vector<int32_t> ids{256};
    for (unsigned char ch : r.prompt.text) ids.push_back(ch);
    const Tensor logits = forward(m, batch_from_tokens({ids})).logits;
    const int64_t T = static_cast<int64_t>(ids.size()), V = 257;
    std::vector<double> z(static_cast<size_t>(V));
    double mx = -1e30, sum = 0;
    for (int64_t v = 0; v < V; ++v) mx = std::max(mx, z[v] = logits.f32()[(T - 1) * V + v]);
    for (double x : z) sum += std::exp(x - mx);
    const int32_t want = static_cast<unsigned char>(r.prompt.expected[0]);
    INFO(r.prompt.text);
    CHECK(r.p_expected == Approx(std::exp(z[want] - mx) / sum).epsilon(1e-6));
    int64_t rank = 1;
    for (double x : z) rank += x > z[want];
    CHECK(r.rank == rank);
    const int64_t top = std::max_element(z.begin(), z.end()) - z.begin();
    CHECK(r.top == std::string(1, static_cast<char>(top)));
  }
  m.config.seq_len = 40;  // shorter than the prompts: refused with the prompt named
  CHECK_THROWS_WITH(run_repeat_prompts(m, tok), Catch::Contains("positions"));
}

TEST_CASE("held-out windows do not overlap and repeated lines are EOS r r", "[model][text]") {
  const hf::Tokenizer tok = byte_tokenizer();
  const TextStream s = tokenize_lines(tok, "abcdef\nghij\nklmnopq\nrs\ntuvwxyz\n");
  const Batch w = text_windows(s, 6, 100);
  // line starts 0 (abcdef), 7 (ghij), 12 (klmnopq), 20 (rs), 23 (tuvwxyz): windows of 6 from 0,
  // then the first start at or after 6 (7), then 13 or later (20); 20+6 <= 31 tokens
  REQUIRE(w.batch == 3);
  CHECK(std::vector<int32_t>(w.tokens.begin(), w.tokens.begin() + 6) == std::vector<int32_t>{256, 'a', 'b', 'c', 'd', 'e'});
  CHECK(std::vector<int32_t>(w.tokens.begin() + 6, w.tokens.begin() + 12) == std::vector<int32_t>{256, 'g', 'h', 'i', 'j', 256});
  CHECK(w.tokens[12] == 256);
  CHECK(w.tokens[13] == 'r');
  const Batch r = repeated_text(s, 5, 10);  // lines of 5 tokens or more: abcdef, klmnopq, tuvwxyz
  REQUIRE(r.batch == 3);
  REQUIRE(r.len == 11);
  std::vector<int32_t> want{256};
  for (int k = 0; k < 2; ++k) want.insert(want.end(), {'k', 'l', 'm', 'n', 'o'});
  CHECK(std::vector<int32_t>(r.tokens.begin() + 11, r.tokens.begin() + 22) == want);
  CHECK(r.part[11 + 5] == kRepeatStart);  // target 'k' of the second copy
  CHECK(r.part[11 + 6] == kRepeat);
  CHECK_THROWS_WITH(repeated_text(s, 8, 10), Catch::Contains("8 tokens long"));
}

TEST_CASE("unigram and bigram baselines equal a hand count", "[model][text]") {
  // train: EOS a b EOS a b EOS a c (vocab 257); scored on one window EOS a b
  TextStream train;
  train.vocab = 257;
  train.eos = 256;
  train.tokens = {256, 'a', 'b', 256, 'a', 'b', 256, 'a', 'c'};
  train.starts = {0, 3, 6};
  Batch w;
  w.batch = 1;
  w.len = 3;
  w.tokens = {256, 'a', 'b'};
  w.targets = {'a', 'b', -1};
  w.part = {0, 0, 0};
  const NgramLoss n = ngram_baselines(train, w);
  REQUIRE(n.tokens == 2);
  const double N = 9, V = 257;
  const double uni_a = (3 + 1) / (N + V), uni_b = (2 + 1) / (N + V);
  CHECK(n.unigram == Approx(-(std::log(uni_a) + std::log(uni_b)) / 2).epsilon(1e-12));
  // EOS is followed by a 3 times out of 3 (1 distinct): λ = 3/4; a by b twice and c once: λ = 3/5
  const double p_a = 0.75 * 1.0 + 0.25 * uni_a, p_b = 0.6 * (2.0 / 3.0) + 0.4 * uni_b;
  CHECK(n.bigram == Approx(-(std::log(p_a) + std::log(p_b)) / 2).epsilon(1e-12));
}

TEST_CASE("held-out text loss is cross_entropy's, split by position for in-context learning", "[model][text]") {
  const ModelConfig c = byte_lm(24, 2);
  const Model m = init_model(c);
  const hf::Tokenizer tok = byte_tokenizer();
  std::string text;
  for (int i = 0; i < 60; ++i) text += "gloss number " + std::to_string(i * 7) + "\n";
  const TextStream s = tokenize_lines(tok, text);
  const Batch w = text_windows(s, 24, 40);
  REQUIRE(w.batch > 16);  // more than one chunk of 16 windows
  const TextEval e = evaluate_text(m, w);
  const LossStats ls = cross_entropy(forward(m, w).logits, w);
  CHECK(e.tokens == ls.all.count);
  CHECK(e.loss == Approx(ls.all.loss()).epsilon(1e-5));
  CHECK(e.icl == Approx(e.late - e.early));
  CHECK(e.early > 0);
}

TEST_CASE("the text task refuses a missing corpus, a mix and another vocabulary", "[model][text]") {
  TaskSpec spec;
  spec.tasks = {Task::Text};
  spec.vocab = 257;
  spec.len = 8;
  CHECK_THROWS_WITH(validate(spec), Catch::Contains("--corpus"));
  auto s = std::make_shared<TextStream>(tokenize_lines(byte_tokenizer(), "some text here\n"));
  spec.text = s;
  CHECK_NOTHROW(validate(spec));
  spec.vocab = 300;
  CHECK_THROWS_WITH(validate(spec), Catch::Contains("must be the same"));
  spec.vocab = 257;
  spec.tasks = {Task::Text, Task::Induction};
  CHECK_THROWS_WITH(validate(spec), Catch::Contains("trains alone"));
  CHECK(parse_task("text") == Task::Text);
}

TEST_CASE("a text run logs held-out loss, ICL and a parameter hash that repeat bit for bit", "[model][text]") {
  const hf::Tokenizer tok = byte_tokenizer();
  std::string text;
  for (int i = 0; i < 80; ++i) text += "the cat " + std::to_string(i % 9) + " sat on the mat\n";
  auto stream = std::make_shared<TextStream>(tokenize_lines(tok, text));
  const ModelConfig c = byte_lm(32, 2);
  TrainOptions o;
  o.task.tasks = {Task::Text};
  o.task.vocab = 257;
  o.task.len = 32;
  o.task.text = stream;
  o.heldout = stream;
  o.batch = 4;
  o.steps = 6;
  o.score_every = 3;
  Model a = init_model(c), b = init_model(c);
  auto log_a = train(a, o), log_b = train(b, o);
  for (auto* log : {&log_a, &log_b})
    for (auto& line : *log) line.erase("seconds");  // wall time: the one field that differs
  REQUIRE(log_a.back().contains("heldout_loss"));
  CHECK(log_a.back()["params_fnv"] == log_b.back()["params_fnv"]);
  CHECK(log_a.back().dump() == log_b.back().dump());
  CHECK(log_a.back()["heldout_loss"].get<double>() < log_a.front()["heldout_loss"].get<double>());
  CHECK(log_a.back()["params_fnv"].get<std::string>() != log_a.front()["params_fnv"].get<std::string>());
  o.heldout = nullptr;
  Model d = init_model(c);
  CHECK_THROWS_WITH(train(d, o), Catch::Contains("held-out"));
}

TEST_CASE("text ablation: a head that writes nothing changes nothing; the others move all three metrics", "[model][text]") {
  const ModelConfig c = byte_lm(24, 4);
  Model m = init_model(c);
  // head 1.2's slice of W_O (columns 2·dk .. 3·dk) is zero: whatever it attends to, it adds nothing
  Tensor& wo = m.params.get("layers.1.attn.W_O.weight");
  const int64_t dk = c.head_dim();
  for (int64_t r = 0; r < c.d_model; ++r)
    for (int64_t k = 2 * dk; k < 3 * dk; ++k) wo.f32()[r * c.d_model + k] = 0;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "a line of held-out text " + std::to_string(i * 13) + "\n";
  const TextStream s = tokenize_lines(byte_tokenizer(), text);
  const TextAblationReport r = ablate_text(m, text_windows(s, 24, 8), false);
  REQUIRE(r.each.size() == 8);
  const TextAblation& silent = r.each[6];
  CHECK(silent.heads[0] == HeadRef{1, 2});
  CHECK(silent.dloss == 0);
  CHECK(silent.kl == Approx(0).margin(1e-9));
  CHECK(r.each[0].kl > 1e-6);
  for (const auto& e : r.each) CHECK(e.kl >= -1e-9);
  REQUIRE(r.together.size() == 3);
  CHECK(r.together[0].heads.size() == 2);
  CHECK(r.together[2].heads.size() == 6);
  // least important first: heads ordered by their own Δloss
  std::vector<double> d;
  for (const auto& e : r.each) d.push_back(e.dloss);
  std::sort(d.begin(), d.end());
  for (const HeadRef& h : r.together[0].heads) CHECK(r.each[static_cast<size_t>(h.layer * 4 + h.head)].dloss <= d[1]);
}
