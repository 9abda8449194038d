// Syntactic heads (src/model/experiments/hf_syntax.h): tokens to words as Clark et al. 2019, the shipped
// hand-annotated arcs and their baselines (counted by hand / by a script from the file), and
// a whole scoring run on a tiny GPT-2 with the tiny tokenizer.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/error.h"
#include "model/text/hf_bpe_train.h"
#include "model/formats/hf_model.h"
#include "model/experiments/hf_syntax.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/text_syntax.h"
#include "model/training/backward.h"

using namespace attnsim;
using namespace attnsim::model::hf;
namespace fs = std::filesystem;

TEST_CASE("word attention: the mean over the query word's tokens of the sum over the key word's") {
  // tokens: BOS, "a", "b1", "b2"   words: a = 0, b = 1 (two tokens)
  const float alpha[16] = {1, 0, 0, 0,  //
                           0.5f, 0.5f, 0, 0,  //
                           0.2f, 0.4f, 0.4f, 0,  //
                           0.1f, 0.3f, 0.2f, 0.4f};
  const std::vector<double> w = word_attention(alpha, 4, {-1, 0, 1, 1}, 2);
  CHECK(w[0] == Approx(0.5));                       // a -> a
  CHECK(w[1] == Approx(0.0));                       // a -> b
  CHECK(w[2] == Approx((0.4 + 0.3) / 2));           // b -> a: mean over b's two tokens
  CHECK(w[3] == Approx((0.4 + 0.0 + 0.2 + 0.4) / 2));  // b -> b: each row's sum over b, then the mean
}

TEST_CASE("tokens map to the word their last byte falls in; a lone space or BOS maps to none") {
  ArcSentence s;
  s.text = "the cat";
  s.words = {"the", "cat"};
  // "the", " cat" (GPT-2 puts the space in front), BOS's empty span, a lone space
  CHECK(words_of_tokens(s, {{0, 0}, {0, 3}, {3, 7}}) == std::vector<int32_t>{-1, 0, 1});
  CHECK(words_of_tokens(s, {{0, 2}, {2, 3}, {3, 4}, {4, 7}}) == std::vector<int32_t>{0, 0, -1, 1});
}

TEST_CASE("the shipped arcs: 147 arcs of four relations, and baselines a script counted from the file") {
  const ArcSet set = read_arcs(default_arcs_path());
  CHECK(set.sentences.size() == 38);
  CHECK(set.arc_count() == 147);
  CHECK(set.relations.size() == 4);
  const HfModel m = load_hf_model(std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/hf_gpt2_tok64");
  const HfText text = open_hf_text(std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/hf_gpt2_tok64", true);
  const SyntaxReport r = score_syntax(m, text, set);
  REQUIRE(r.relations == std::vector<std::string>{"amod", "det", "nsubj", "obj", "all"});
  // the previous word: amod 23/24, det 40/63, nsubj 28/35, obj 1/25, all 92/147
  const std::vector<int64_t> prev{23, 40, 28, 1, 92}, arcs{24, 63, 35, 25, 147}, noun{0, 0, 18, 0, 18};
  for (size_t g = 0; g < 5; ++g) {
    CHECK(r.previous_word[g].hits == prev[g]);
    CHECK(r.previous_word[g].arcs == arcs[g]);
    CHECK(r.nearest_noun[g].hits == noun[g]);
    int64_t per_head = 0;
    for (const ArcScore& h : r.head[g]) per_head = std::max(per_head, h.arcs);
    CHECK(per_head == arcs[g]);  // every head scored on every arc
  }
  CHECK(r.chance[1] == Approx(0.3715).margin(1e-4));  // det: mean of 1 / earlier words
  CHECK(r.chance[4] == Approx(0.4252).margin(1e-4));
  // "all" is the sum of the relations, head by head
  for (size_t h = 0; h < r.head[4].size(); ++h)
    CHECK(r.head[4][h].hits == r.head[0][h].hits + r.head[1][h].hits + r.head[2][h].hits + r.head[3][h].hits);
}

TEST_CASE("an attnsim checkpoint trained on text scores the same arcs, <|endoftext|> first", "[model]") {
  const ArcSet set = read_arcs(default_arcs_path());
  model::ModelConfig c;
  c.vocab = 257;  // bytes and <|endoftext|>
  c.seq_len = 256;
  c.d_model = 16;
  c.heads = 2;
  c.layernorm = c.mlp = c.tied = true;
  const model::Model m = model::init_model(c);
  const Tokenizer tok = parse_tokenizer_json(tokenizer_json(train_bpe("ab", 1)), "bytes");
  const SyntaxReport r = model::score_syntax_native(m, tok, set);
  REQUIRE(r.relations.size() == 5);
  CHECK(r.head[4].size() == 4);
  CHECK(r.previous_word[4].hits == 92);  // the baselines do not depend on the model
  CHECK(r.chance[4] == Approx(0.4252).margin(1e-4));
  for (const ArcScore& h : r.head[4]) CHECK(h.arcs == 147);
  c.seq_len = 40;  // shorter than the longest sentence in bytes
  CHECK_THROWS_WITH(model::score_syntax_native(model::init_model(c), tok, set), Catch::Contains("positions"));
  const Tokenizer no_eos = parse_tokenizer_json(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})", "no eos");
  CHECK_THROWS_WITH(model::score_syntax_native(m, no_eos, set), Catch::Contains("endoftext"));
}

TEST_CASE("an arcs file that lies is one Error naming the sentence") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-arcs-" + std::to_string(::getpid()));
  fs::create_directories(d);
  auto error = [&](const std::string& sentence) -> std::string {
    std::ofstream(d / "a.json") << R"({"relations": {"det": ""}, "sentences": [)" + sentence + "]}";
    try {
      read_arcs((d / "a.json").string());
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  CHECK(error(R"({"text": "the cat", "words": ["the", "cat"], "pos": ["DET", "NOUN"], "arcs": [[1, 0, "det"]]})") == "(accepted)");
  CHECK_THAT(error(R"({"text": "the cat", "words": ["the", "cat"], "pos": ["DET", "NOUN"], "arcs": [[0, 1, "det"]]})"),
             Catch::Contains("sentence \"the cat\": arc [0, 1] must point from a word back to an earlier one"));
  CHECK_THAT(error(R"({"text": "the cat", "words": ["the", "dog"], "pos": ["DET", "NOUN"], "arcs": []})"),
             Catch::Contains("are not the text's space-separated words"));
  CHECK_THAT(error(R"({"text": "the cat", "words": ["the", "cat"], "pos": ["DET"], "arcs": []})"),
             Catch::Contains("one tag per word"));
  CHECK_THAT(error(R"({"text": "the cat", "words": ["the", "cat"], "pos": ["DET", "NOUN"], "arcs": [[1, 0, "amod"]]})"),
             Catch::Contains("relation \"amod\" is not among the file's relations"));
  CHECK_THAT(error(R"({"text": 3})"), Catch::Contains("not an arcs file"));
  fs::remove_all(d);
}

TEST_CASE("lesson 18's framed sentence: head 2.1 of wordnet-lm-s1 finds the object's verb (breath -> took)", "[model]") {
  // lessons/18-heads-in-language.toml shows this sentence with "breath" framed and says head
  // 2.1's strongest word in that row is "took": the shipped seed must keep that true.
  const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/wordnet-lm-s1";
  ArcSet set = read_arcs(default_arcs_path());
  REQUIRE(set.sentences[0].text == "he took a deep breath and dived into the pool");
  set.sentences.resize(1);
  std::vector<Arc> obj;
  for (const Arc& a : set.sentences[0].arcs)
    if (a.relation == "obj") obj.push_back(a);
  REQUIRE(obj.size() == 1);
  CHECK(set.sentences[0].words[static_cast<size_t>(obj[0].query)] == "breath");
  CHECK(set.sentences[0].words[static_cast<size_t>(obj[0].key)] == "took");
  set.sentences[0].arcs = obj;
  const SyntaxReport r = model::score_syntax_native(model::load_checkpoint(dir), load_tokenizer(dir), set);
  REQUIRE(r.relations[3] == "obj");
  CHECK(r.head[3][2 * 4 + 1].hits == 1);  // head 2.1 of 4 heads a layer
  CHECK(r.previous_word[3].hits == 0);     // "deep" is just before it
}
