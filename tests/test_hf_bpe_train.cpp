// Learning a byte-level BPE (src/model/hf_bpe_train.h): the merges a hand count gives, the
// folder read back by the tokenizer every model folder goes through, exact round trips.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "helpers.h"
#include "model/hf_bpe_train.h"
#include "model/hf_tokenizer.h"

using namespace attnsim;
using namespace attnsim::model::hf;
namespace fs = std::filesystem;

namespace {

// The learned tokenizer written as a folder and loaded back.
Tokenizer written(const BpeTraining& bpe, const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attnsim-bpe-" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(d);
  std::ofstream(d / "tokenizer.json") << tokenizer_json(bpe);
  Tokenizer t = load_tokenizer(d.string());
  fs::remove_all(d);
  return t;
}

}  // namespace

TEST_CASE("BPE learns the pairs a hand count gives, most frequent first, ties by the smaller ids", "[tokenizer]") {
  // words (GPT-2 split): "low", " low" twice, " lower", " lowest"
  const BpeTraining bpe = train_bpe("low low low lower lowest", 3);
  // pairs: (l,o) 5, (o,w) 5, (' ',l) 4, (w,e) 2, (e,r) 1, (e,s) 1, (s,t) 1: (l,o) and (o,w) tie
  // at 5 and 'l' < 'o', so (l,o) first; then (lo,w) 5; then (' ',low) 4
  REQUIRE(bpe.merges.size() == 3);
  CHECK(bpe.tokens[bpe.merges[0].first] == "l");
  CHECK(bpe.tokens[256] == "lo");
  CHECK(bpe.tokens[257] == "low");
  CHECK(bpe.tokens[258] == " low");
  CHECK(bpe.counts == std::vector<int64_t>{5, 5, 4});
  CHECK(bpe.words == 5);
  CHECK(bpe.distinct_words == 4);
  const Tokenizer t = written(bpe, "hand");
  CHECK(t.vocab_size() == 256 + 3 + 1);
  CHECK(t.encode("low lower") == std::vector<int32_t>{257, 258, 'e', 'r'});
  CHECK(t.token_id("<|endoftext|>") == 259);
}

TEST_CASE("a learned tokenizer round-trips any text byte for byte, Korean included", "[tokenizer]") {
  std::string corpus;
  for (int i = 0; i < 50; ++i) corpus += "the cat sat on the mat. the dog ate the bone; 고양이가 생선을 먹었다\n";
  const BpeTraining bpe = train_bpe(corpus, 40);
  const Tokenizer t = written(bpe, "korean");
  for (const std::string& text : {std::string("the cat ate the mat"), std::string("고양이가 부엌에서 생선을 몰래 먹었다"),
                                  std::string("\xff\xfe odd bytes \x01"), std::string("  two  spaces\n\nand lines")})
    CHECK(t.decode(t.encode(text)) == text);
  CHECK(t.encode("the cat").size() < 7);  // merges learned on these words shorten them
}

TEST_CASE("BPE training options out of range are refused", "[tokenizer]") {
  CHECK_THROWS_WITH(train_bpe("a b", 0), Catch::Contains("--merges"));
  CHECK_THROWS_WITH(train_bpe("a b", int64_t{1} << 62), Catch::Contains("--merges"));
  // a corpus with no pair seen twice learns nothing rather than memorising one-offs
  CHECK(train_bpe("ab", 10).merges.empty());
}

TEST_CASE("bpe-train writes a tokenizer folder and reports the fit on held-out text", "[tokenizer][cli]") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-bpe-cli-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  std::string corpus;
  for (int i = 0; i < 30; ++i) corpus += "a small open container used for drinking\n";
  std::ofstream(d / "train.txt") << corpus;
  std::ofstream(d / "held.txt") << "an open container\n";
  const auto r = test::run_cli("bpe-train --corpus " + (d / "train.txt").string() + " --heldout " + (d / "held.txt").string() +
                               " --merges 20 --out " + (d / "tok").string() + " --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["merges"] == 20);
  CHECK(j["vocab"] == 256 + 20 + 1);
  CHECK(j["heldout"]["round_trip"] == true);
  CHECK(j["heldout"]["bytes"] == 18);
  for (const char* f : {"tokenizer.json", "vocab.json", "merges.txt"}) CHECK(fs::exists(d / "tok" / f));
  // vocab.json + merges.txt alone give the same tokens as tokenizer.json
  fs::create_directories(d / "pair");
  fs::copy_file(d / "tok" / "vocab.json", d / "pair" / "vocab.json");
  fs::copy_file(d / "tok" / "merges.txt", d / "pair" / "merges.txt");
  CHECK(load_tokenizer((d / "pair").string()).encode(corpus) == load_tokenizer((d / "tok").string()).encode(corpus));
  fs::remove_all(d);
}
