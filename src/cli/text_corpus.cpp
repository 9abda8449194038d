#include "text_corpus.h"

#include <filesystem>
#include <sstream>

#include "engine/error.h"
#include "engine/read_file.h"
#include "hub/digest.h"
#include "model/text/hf_tokenizer.h"

namespace attnsim::cli {

namespace {

// A classroom corpus, not a web crawl: WordNet's is 10 MB.
constexpr int64_t kMaxCorpusBytes = int64_t{256} << 20;

std::string sha256_of(const std::string& bytes) {
  hub::Digest d(hub::Digest::Kind::Sha256, static_cast<int64_t>(bytes.size()));
  d.update(bytes.data(), bytes.size());
  return d.hex();
}

// name -> sha256 from a `sha256sum` listing ("HEX  NAME" per line).
std::string listed_sum(const std::string& sums, const std::string& name, const std::string& path) {
  std::istringstream in(sums);
  for (std::string line; std::getline(in, line);)
    if (line.size() == 64 + 2 + name.size() && line.compare(66, std::string::npos, name) == 0) return line.substr(0, 64);
  throw Error(path + " has no line for " + name + " (tools/corpus.py writes it)");
}

std::shared_ptr<const model::TextStream> stream_of(const model::hf::Tokenizer& tok, const std::string& dir,
                                                   const std::string& name, const std::string& sums,
                                                   const std::string& tokenizer_sha) {
  const std::string path = (std::filesystem::path(dir) / name).string();
  const std::string text = read_text_file(path, kMaxCorpusBytes);
  const std::string sha = sha256_of(text);
  const std::string want = listed_sum(sums, name, (std::filesystem::path(dir) / "SHA256SUMS").string());
  if (sha != want)
    throw Error(path + ": sha256 " + sha + " is not the " + want + " SHA256SUMS lists (run tools/corpus.py again)");
  auto s = std::make_shared<model::TextStream>(model::tokenize_lines(tok, text));
  s->name = name;
  s->sha256 = sha;
  s->tokenizer_sha256 = tokenizer_sha;
  return s;
}

}  // namespace

TextCorpus load_text_corpus(const std::string& corpus_dir, const std::string& tokenizer_dir) {
  TextCorpus c;
  c.tokenizer_json = (std::filesystem::path(tokenizer_dir) / "tokenizer.json").string();
  const std::string tok_bytes = read_text_file(c.tokenizer_json, model::hf::kMaxTokenizerBytes);
  const model::hf::Tokenizer tok = model::hf::parse_tokenizer_json(tok_bytes, c.tokenizer_json);
  const std::string tok_sha = sha256_of(tok_bytes);
  const std::string sums = read_text_file((std::filesystem::path(corpus_dir) / "SHA256SUMS").string(), 1 << 16);
  c.train = stream_of(tok, corpus_dir, "train.txt", sums, tok_sha);
  c.heldout = stream_of(tok, corpus_dir, "heldout.txt", sums, tok_sha);
  return c;
}

void check_recipe_text(const TextCorpus& c, const nlohmann::json& r) {
  const auto field = [&](const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_string())
      throw Error("the recipe's \"text\" entry has no " + std::string(key));
    return j.at(key).get<std::string>();
  };
  if (field(r, "tokenizer_sha256") != c.train->tokenizer_sha256)
    throw Error("tokenizer.json is not the one the recipe was trained with (sha256 " + c.train->tokenizer_sha256 + ")");
  if (field(r, "sha256") != c.train->sha256)
    throw Error("the corpus's train.txt is not the recipe's (sha256 " + c.train->sha256 + ", recorded " +
                field(r, "sha256") + ")");
  if (r.contains("heldout") && field(r.at("heldout"), "sha256") != c.heldout->sha256)
    throw Error("the corpus's heldout.txt is not the recipe's (sha256 " + c.heldout->sha256 + ")");
}

}  // namespace attnsim::cli
