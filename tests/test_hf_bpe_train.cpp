// Learning a byte-level BPE (src/model/text/hf_bpe_train.h): the merges a hand count gives and
// the definition gives, the folder read back by the tokenizer every model folder goes
// through, exact round trips, and hostile corpora (issue 49) learned in linear time or
// refused with nothing written.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/error.h"
#include "helpers.h"
#include "model/text/hf_bpe_train.h"
#include "model/text/hf_split.h"
#include "model/text/hf_tokenizer.h"

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

using Learned = std::vector<std::pair<std::pair<int32_t, int32_t>, int64_t>>;  // rank -> (pair, count)

// BPE training by its definition, with nothing kept between merges: count every pair of every
// word, merge the best everywhere, left to right, and count again.
Learned reference_bpe(const std::string& text, int64_t merges) {
  std::map<std::vector<int32_t>, int64_t> words;
  for (const auto& [b, e] : split_words(text, SplitPattern::Gpt2)) {
    std::vector<int32_t> w;
    for (size_t i = b; i < e; ++i) w.push_back(static_cast<uint8_t>(text[i]));
    ++words[w];
  }
  Learned out;
  for (int32_t merged = 256; merged < 256 + merges; ++merged) {
    std::map<std::pair<int32_t, int32_t>, int64_t> pairs;
    for (const auto& [w, n] : words)
      for (size_t i = 0; i + 1 < w.size(); ++i) pairs[{w[i], w[i + 1]}] += n;
    std::pair<std::pair<int32_t, int32_t>, int64_t> best{{0, 0}, 0};
    for (const auto& [p, n] : pairs)  // in (left, right) order: the first of the highest count wins
      if (n > best.second) best = {p, n};
    if (best.second < 2) break;
    out.push_back(best);
    std::map<std::vector<int32_t>, int64_t> next;
    for (const auto& [w, n] : words) {
      std::vector<int32_t> m;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && std::make_pair(w[i], w[i + 1]) == best.first) {
          m.push_back(merged);
          ++i;
        } else {
          m.push_back(w[i]);
        }
      }
      next[m] += n;
    }
    words = std::move(next);
  }
  return out;
}

Learned learned(const BpeTraining& bpe) {
  Learned out;
  for (size_t k = 0; k < bpe.merges.size(); ++k) out.push_back({bpe.merges[k], bpe.counts[k]});
  return out;
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

TEST_CASE("BPE training learns exactly the merges its definition gives, overlapping runs included", "[tokenizer]") {
  // runs of one letter ("aaaa": (a, a) merges left to right), alternations ("abab"), words
  // that repeat, spaces, newlines, a Korean syllable's bytes and bytes that are not UTF-8
  const std::vector<std::string> alphabet = {"a", "a", "b", " ", "\n", "\xea\xb0\x80", "\xff", "\x80"};
  std::mt19937 rng(49);
  for (int corpus = 0; corpus < 60; ++corpus) {
    std::string text;
    const size_t length = 50 + rng() % 1500;
    while (text.size() < length) text += alphabet[rng() % alphabet.size()];
    INFO("corpus " << corpus);
    CHECK(learned(train_bpe(text, 80)) == reference_bpe(text, 80));
  }
  for (const std::string text : {"aaaaaaa aaaa aa aaa", "abababab abab", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})
    CHECK(learned(train_bpe(text, 50)) == reference_bpe(text, 50));
}

TEST_CASE("a corpus that is one long word of invalid UTF-8 learns in linear time", "[tokenizer]") {
  // 1 MiB of bytes 0x80..0xFF over and over: GPT-2's split leaves it one word. Rewriting the
  // whole word at each merge took minutes and gigabytes (issue 49).
  std::string text;
  while (text.size() < (size_t{1} << 20)) text += static_cast<char>(0x80 + text.size() % 128);
  const auto t0 = std::chrono::steady_clock::now();
  const BpeTraining bpe = train_bpe(text, 300);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  // 127 merges pair the 128 bytes up, level by level, each seen 8192 times; then the 128-byte
  // cycle doubles: 8191 neighbouring pairs of it, 4095 of the pair, ..., 3 of 2048 cycles;
  // 4096 cycles are then one pair, seen once: training stops at 139 merges.
  REQUIRE(bpe.merges.size() == 139);
  CHECK(bpe.tokens[256] == "\x80\x81");
  CHECK(bpe.tokens[256 + 126].size() == 128);
  CHECK(bpe.counts[0] == 8192);
  CHECK(bpe.counts[126] == 8192);
  CHECK(bpe.counts[127] == 8191);
  CHECK(bpe.counts[128] == 4095);
  CHECK(bpe.counts.back() == 3);
  CHECK(bpe.tokens.back().size() == 128 * 2048 * 2);
}

TEST_CASE("bpe-train refuses a corpus the tokenizer could not encode, before it reads it", "[tokenizer][cli]") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-bpe-big-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  std::ofstream(d / "big.txt").close();
  fs::resize_file(d / "big.txt", static_cast<uintmax_t>(kMaxNormalizedBytes) + 1);  // sparse: no bytes written
  const auto r = test::run_cli("bpe-train --corpus " + (d / "big.txt").string() + " --out " + (d / "tok").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("big.txt: 16,777,217 bytes of text; attnsim's tokenizers encode at most 16,777,216 bytes (16.00 MiB) at once"));
  CHECK(!fs::exists(d / "tok"));
  CHECK_THROWS_WITH(train_bpe(std::string(static_cast<size_t>(kMaxNormalizedBytes) + 1, 'a'), 10),
                    Catch::Contains("attnsim learns a tokenizer from at most 16.00 MiB"));
  CHECK_THROWS_WITH(train_bpe("the cat sat on the mat", 10, 1024), Catch::Contains("needs about") && Catch::Contains("--mem-limit"));
  fs::remove_all(d);
}

TEST_CASE("bpe-train writes nothing when the tokenizer it learned would not load", "[tokenizer][cli]") {
  // 8 MiB of the byte 0x80 (2 bytes of UTF-8 as a GPT-2 character): each merge doubles the
  // longest token, and the 22nd (4 MiB) would make tokenizer.json larger than the 32 MiB any
  // tokenizer file may have. The folder used to be written first (a 33,559,108-byte
  // tokenizer.json) and the tokenizer refused when read back.
  const fs::path d = fs::temp_directory_path() / ("attnsim-bpe-long-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  std::ofstream(d / "x.txt") << std::string(size_t{8} << 20, '\x80');
  const auto r = test::run_cli("bpe-train --corpus " + (d / "x.txt").string() + " --merges 40 --out " + (d / "tok").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("after 21 merges the next token is 4,194,304 bytes long") &&
                           Catch::Contains("learn at most 21 merges"));
  CHECK(!fs::exists(d / "tok"));
  fs::remove_all(d);
}

TEST_CASE("bpe-train predicts what trying its tokenizer on the corpus takes, before it does", "[tokenizer][cli]") {
  // 1 MiB of invalid UTF-8 on one line: learning needs under 60 MiB, but the line encoded whole
  // by the learned tokenizer is predicted at 90 bytes a byte: refused before, nothing written.
  const fs::path d = fs::temp_directory_path() / ("attnsim-bpe-fit-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  std::string text;
  while (text.size() < (size_t{1} << 20)) text += static_cast<char>(0x80 + text.size() % 128);
  std::ofstream(d / "x.txt") << text;
  const auto r = test::run_cli("bpe-train --corpus " + (d / "x.txt").string() + " --merges 10 --mem-limit 60M --out " +
                               (d / "tok").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("trying the learned tokenizer on the corpus needs about 93.00 MiB") &&
                           Catch::Contains("over the limit of 60.00 MiB (--mem-limit)"));
  CHECK(!fs::exists(d / "tok"));
  fs::remove_all(d);
}
