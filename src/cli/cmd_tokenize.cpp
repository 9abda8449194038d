// attnsim-cli tokenize: a Hugging Face model folder's tokenizer (tokenizer.json, or GPT-2's
// vocab.json + merges.txt) on the user's text, one row per token with the bytes it covers.
//   --text "안녕 world"    encode: id, byte range, display form of each token
//   --tokens 15496,995     decode: the text those ids stand for, and each token's display form
//   --file corpus.txt      a whole file: bytes, tokens, bytes per token, and whether decoding
//                          the tokens gives the file back byte for byte (exit 1 when it does not)
// BOS is not added (the model commands put it in front); the header line names it.
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/text/hf_tokenizer.h"
#include "model/training/memory.h"
#include "options.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct Args {
  std::string dir, text, tokens, file;
  bool json = false;
};

std::vector<int32_t> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  size_t at = 0;
  while (at <= list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(at, end - at);
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 0 || v > INT32_MAX)
      throw Error("--tokens: \"" + one_line(item) + "\" is not a token id (a whole number from 0)");
    ids.push_back(static_cast<int32_t>(v));
    at = end + 1;
  }
  return ids;
}

// The file through encode and decode: 0 when the bytes come back, 1 (and where they part) when not.
int round_trip(const model::hf::Tokenizer& tok, const std::string& path, bool json) {
  const std::string text = model::hf::read_text_to_encode(path);
  const auto n = static_cast<int64_t>(text.size());
  check_fits(checked_add(tok.predict_encode_bytes(n), n), 0, "tokenizing " + path + " and decoding it again",
                    "tokenize a smaller file");  // the tokens, and the text they decode to
  const std::vector<int32_t> ids = tok.encode(text);
  const std::string back = tok.decode(ids);
  const bool exact = back == text;
  size_t at = 0;
  while (at < text.size() && at < back.size() && text[at] == back[at]) ++at;
  const double per = ids.empty() ? 0.0 : static_cast<double>(text.size()) / static_cast<double>(ids.size());
  if (json)
    std::printf("%s\n", nlohmann::json{{"bytes", text.size()}, {"tokens", ids.size()}, {"bytes_per_token", per},
                                       {"round_trip", exact}}.dump().c_str());
  else if (exact)
    std::printf("%s: %zu bytes, %zu tokens (%.3f bytes per token), round trip exact\n", path.c_str(), text.size(),
                ids.size(), per);
  else
    std::printf("%s: %zu bytes, %zu tokens; decoding differs from byte %zu on\n", path.c_str(), text.size(), ids.size(), at);
  return exact ? 0 : 1;
}

}  // namespace

Runner add_tokenize_command(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("tokenize", "a Hugging Face model folder's tokenizer on your text (or ids back to text)");
  cmd->add_option("--model", a->dir, "folder with tokenizer.json, or vocab.json + merges.txt")->required()->check(not_empty());
  auto* text = cmd->add_option("--text", a->text, "text to encode (UTF-8; any bytes round-trip)");
  cmd->add_option("--tokens", a->tokens, "ids to decode, e.g. 15496,995")->excludes(text);
  cmd->add_option("--file", a->file, "a text file: bytes per token and the byte-for-byte round trip")
      ->check(not_empty())->excludes(text)->excludes("--tokens");
  cmd->add_flag("--json", a->json, "JSON instead of a table");
  return [a, cmd] {
    const model::hf::Tokenizer tok = model::hf::load_tokenizer(a->dir);
    if (!a->file.empty()) return round_trip(tok, a->file, a->json);
    std::vector<int32_t> ids;
    std::vector<model::hf::Span> spans;
    std::string decoded;
    if (cmd->count("--tokens")) {
      ids = parse_ids(a->tokens);
      decoded = tok.decode(ids);
    } else {
      spans = tok.encode_spans(a->text, &ids);
    }
    std::vector<std::string> labels;
    for (const int32_t id : ids) labels.push_back(tok.token_label(id));
    if (a->json) {
      nlohmann::json j{{"tokenizer", tok.kind()}, {"ids", ids}, {"labels", labels}};
      j["bos"] = tok.bos_id() ? nlohmann::json(*tok.bos_id()) : nlohmann::json();
      if (cmd->count("--tokens")) j["text"] = decoded;
      else {
        j["spans"] = nlohmann::json::array();
        for (const auto& s : spans) j["spans"].push_back({s.begin, s.end});
      }
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return 0;
    }
    std::printf("tokenizer: %s; BOS %s\n", tok.kind().c_str(),
                tok.bos_id() ? std::to_string(*tok.bos_id()).c_str() : "none");
    if (cmd->count("--tokens")) std::printf("text: %s\n", one_line(decoded).c_str());
    Table t({"#", "id", "bytes", "token"});
    for (size_t i = 0; i < ids.size(); ++i)
      t.add({std::to_string(i), std::to_string(ids[i]),
             spans.empty() ? "" : std::to_string(spans[i].begin) + "-" + std::to_string(spans[i].end), one_line(labels[i])});
    t.print();
    return 0;
  };
}

}  // namespace attnsim::cli
