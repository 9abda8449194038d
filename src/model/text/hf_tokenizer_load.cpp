// tokenizer.json (and GPT-2's vocab.json + merges.txt) -> TokenizerSpec, trusting nothing:
// the size is refused before reading, the nesting before parsing, and every id, merge and
// pipeline stage is checked; whatever attnsim does not run is named in the Error.
#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "engine/error.h"
#include "engine/nesting.h"
#include "engine/read_file.h"
#include "model/text/hf_bytes.h"
#include "model/text/hf_tokenizer.h"
#include "model/text/hf_unicode.h"

namespace attnsim::model::hf {

namespace {

using nlohmann::json;

// Ids become indexes of a vector: a vocabulary that claims id 2^31 must not allocate 16 GB.
// Gemma's 256,000 tokens are the largest of the families; 2^22 leaves room.
constexpr int64_t kMaxId = (int64_t{1} << 22) - 1;

struct Ctx {
  std::string what;  // the file, first in every message
  [[noreturn]] void fail(const std::string& msg) const { throw Error(what + ": " + one_line(msg)); }
};

const json& member(const Ctx& c, const json& obj, const char* key, const char* where) {
  if (!obj.is_object() || !obj.contains(key)) c.fail(std::string(where) + " has no \"" + key + "\"");
  return obj.at(key);
}

std::string string_of(const Ctx& c, const json& v, const std::string& where) {
  if (!v.is_string()) c.fail(where + " is not a string");
  return v.get<std::string>();
}

// A Prepend, Replace or Metaspace string: real ones are "▁" or " ".
std::string rewrite_of(const Ctx& c, const json& v, const std::string& where) {
  std::string s = string_of(c, v, where);
  if (s.size() > kMaxRewriteBytes)
    c.fail(where + " is " + std::to_string(s.size()) + " bytes long; attnsim runs rewrite strings of up to " +
           std::to_string(kMaxRewriteBytes) + " bytes");
  return s;
}

template <class Steps>
void count_step(const Ctx& c, const Steps& steps, const char* what) {
  if (steps.size() >= kMaxPipelineSteps)
    c.fail(std::string(what) + " has more than " + std::to_string(kMaxPipelineSteps) +
           " steps; attnsim runs at most that many");
}

std::string type_of(const Ctx& c, const json& stage, const char* where) {
  return string_of(c, member(c, stage, "type", where), std::string(where) + " type");
}

int32_t id_of(const Ctx& c, const json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxId)
    c.fail(where + " has id " + v.dump() + ", not an integer in 0.." + std::to_string(kMaxId));
  return static_cast<int32_t>(v.get<int64_t>());
}

void read_vocab(const Ctx& c, const json& vocab, BpeModel& m) {
  if (!vocab.is_object()) c.fail("the vocabulary is not an object of token -> id");
  for (const auto& [token, id_json] : vocab.items()) {
    if (token.empty()) c.fail("the vocabulary has an empty token");
    const int32_t id = id_of(c, id_json, "token \"" + token + "\"");
    if (static_cast<size_t>(id) >= m.tokens.size()) m.tokens.resize(static_cast<size_t>(id) + 1);
    if (!m.tokens[id].empty())
      c.fail("tokens \"" + m.tokens[id] + "\" and \"" + token + "\" have the same id " + std::to_string(id));
    m.tokens[id] = token;
    m.vocab.emplace(token, id);
  }
  if (m.tokens.empty()) c.fail("the vocabulary is empty");
}

// Merge k (0-based, its rank) of tokens a and b; both and their concatenation must be tokens.
void add_merge(const Ctx& c, BpeModel& m, size_t k, const std::string& a, const std::string& b) {
  auto id = [&](const std::string& t) {
    const auto it = m.vocab.find(t);
    if (it == m.vocab.end())
      c.fail("merge " + std::to_string(k + 1) + " (\"" + a + " " + b + "\") needs the token \"" + t +
             "\", which is not in the vocabulary");
    return it->second;
  };
  const int32_t left = id(a), right = id(b), result = id(a + b);
  m.merges.emplace(BpeModel::pair(left, right), Merge{static_cast<int32_t>(k), result});  // a repeat keeps its first rank
}

void read_merges(const Ctx& c, const json& merges, BpeModel& m) {
  if (!merges.is_array()) c.fail("model.merges is not a list");
  for (size_t k = 0; k < merges.size(); ++k) {
    const json& e = merges[k];
    if (e.is_string()) {  // "a b" (tokenizers before 0.20)
      const std::string s = e.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        c.fail("merge " + std::to_string(k + 1) + " \"" + s + "\" is not two tokens separated by one space");
      add_merge(c, m, k, s.substr(0, sp), s.substr(sp + 1));
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {  // ["a", "b"]
      add_merge(c, m, k, e[0].get<std::string>(), e[1].get<std::string>());
    } else {
      c.fail("merge " + std::to_string(k + 1) + " is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
}

void byte_fallback_ids(BpeModel& m) {
  static const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string t = std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
    const auto it = m.vocab.find(t);
    m.byte_ids[b] = it == m.vocab.end() ? -1 : it->second;
  }
}

void read_model(const Ctx& c, const json& model, BpeModel& m) {
  if (!model.is_object()) c.fail("\"model\" is not an object");
  const std::string type = model.contains("type") ? string_of(c, model["type"], "model.type") : "BPE";
  if (type != "BPE")
    c.fail("model type \"" + type + "\" is not supported (attnsim runs BPE tokenizers: GPT-2, Llama, Qwen2)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty())
      c.fail(std::string("model.") + key + " \"" + model[key].get<std::string>() +
             "\" is not supported (GPT-2 and Llama-family BPE have none)");
  read_vocab(c, member(c, model, "vocab", "model"), m);
  read_merges(c, member(c, model, "merges", "model"), m);
  m.byte_fallback = model.value("byte_fallback", false);
  m.fuse_unk = model.value("fuse_unk", false);
  m.ignore_merges = model.value("ignore_merges", false);
  if (m.byte_fallback) byte_fallback_ids(m);
  else m.byte_ids.fill(-1);
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    const std::string unk = string_of(c, model["unk_token"], "model.unk_token");
    const auto it = m.vocab.find(unk);
    if (it == m.vocab.end()) c.fail("the unknown token \"" + unk + "\" is not in the vocabulary");
    m.unk = it->second;
  }
}

void read_normalizer(const Ctx& c, const json& n, std::vector<NormalizeStep>& out) {
  if (n.is_null()) return;
  const std::string type = type_of(c, n, "normalizer");
  if (type == "Sequence") {
    const json& list = member(c, n, "normalizers", "normalizer Sequence");
    if (!list.is_array()) c.fail("normalizer Sequence's \"normalizers\" is not a list");
    for (const json& s : list) read_normalizer(c, s, out);
  } else if (type == "Prepend") {
    count_step(c, out, "the normalizer");
    out.push_back({NormalizeStep::Prepend, rewrite_of(c, member(c, n, "prepend", "normalizer Prepend"), "Prepend's prepend"), ""});
  } else if (type == "Replace") {
    const json& pattern = member(c, n, "pattern", "normalizer Replace");
    if (!pattern.is_object() || !pattern.contains("String"))
      c.fail("normalizer Replace with pattern " + pattern.dump().substr(0, 80) + " is not supported (only a plain String)");
    count_step(c, out, "the normalizer");
    out.push_back({NormalizeStep::Replace, rewrite_of(c, pattern["String"], "Replace's pattern"),
                   rewrite_of(c, member(c, n, "content", "normalizer Replace"), "Replace's content")});
  } else if (type == "NFC") {
    count_step(c, out, "the normalizer");
    out.push_back({NormalizeStep::Nfc, "", ""});
  } else {
    c.fail("normalizer \"" + type + "\" is not supported (attnsim runs Sequence, Prepend, Replace and NFC)");
  }
}

SplitPattern pattern_of(const Ctx& c, const json& stage) {
  const json& pattern = member(c, stage, "pattern", "pre_tokenizer Split");
  if (!pattern.is_object() || !pattern.contains("Regex") || !pattern["Regex"].is_string())
    c.fail("pre_tokenizer Split with pattern " + pattern.dump() + " is not supported (only the known regexes)");
  const std::string regex = pattern["Regex"].get<std::string>();
  const auto known = known_pattern(regex);
  if (!known)
    c.fail("pre_tokenizer Split's regex " + regex + " is not one attnsim knows (GPT-2's, Llama 3's, Qwen2's)");
  if (stage.value("behavior", std::string("Isolated")) != "Isolated" || stage.value("invert", false))
    c.fail("pre_tokenizer Split with behavior \"" + stage.value("behavior", std::string()) +
           "\" or invert is not supported (only Isolated)");
  return *known;
}

void read_pre_tokenizer(const Ctx& c, const json& p, std::vector<PreTokenizeStep>& out) {
  if (p.is_null()) return;
  const std::string type = type_of(c, p, "pre_tokenizer");
  PreTokenizeStep s{};
  if (type == "Sequence") {
    const json& list = member(c, p, "pretokenizers", "pre_tokenizer Sequence");
    if (!list.is_array()) c.fail("pre_tokenizer Sequence's \"pretokenizers\" is not a list");
    for (const json& e : list) read_pre_tokenizer(c, e, out);
    return;
  } else if (type == "ByteLevel") {
    s.kind = PreTokenizeStep::ByteLevel;
    s.use_regex = p.value("use_regex", true);
    s.add_prefix_space = p.value("add_prefix_space", false);
  } else if (type == "Split") {
    s.kind = PreTokenizeStep::Split;
    s.pattern = pattern_of(c, p);
  } else if (type == "Digits") {
    s.kind = PreTokenizeStep::Digits;
    s.individual_digits = p.value("individual_digits", false);
  } else if (type == "Metaspace") {
    s.kind = PreTokenizeStep::Metaspace;
    s.replacement = p.contains("replacement") ? rewrite_of(c, p["replacement"], "pre_tokenizer Metaspace's replacement")
                                              : std::string("\u2581");
    if (s.replacement.empty()) c.fail("pre_tokenizer Metaspace has an empty replacement");
    const std::string scheme = p.value("prepend_scheme", std::string(p.value("add_prefix_space", true) ? "always" : "never"));
    if (scheme == "always") s.prepend = PreTokenizeStep::Always;
    else if (scheme == "first") s.prepend = PreTokenizeStep::First;
    else if (scheme == "never") s.prepend = PreTokenizeStep::Never;
    else c.fail("pre_tokenizer Metaspace's prepend_scheme \"" + scheme + "\" is not always, first or never");
    s.split = p.value("split", true);
  } else {
    c.fail("pre_tokenizer \"" + type + "\" is not supported (attnsim runs Sequence, ByteLevel, Split, Digits and Metaspace)");
  }
  count_step(c, out, "the pre_tokenizer");
  out.push_back(s);
}

void read_decoder(const Ctx& c, const json& d, DecodeRule& r) {
  if (d.is_null()) return;
  const std::string type = type_of(c, d, "decoder");
  if (type == "Sequence") {
    const json& list = member(c, d, "decoders", "decoder Sequence");
    if (!list.is_array()) c.fail("decoder Sequence's \"decoders\" is not a list");
    for (const json& e : list) read_decoder(c, e, r);
  } else if (type == "ByteLevel") {
    r.byte_level = true;
  } else if (type == "ByteFallback") {
    r.byte_fallback = true;
  } else if (type == "Fuse") {
    // joining the tokens' strings is what decode does anyway
  } else if (type == "Replace") {
    const json& pattern = member(c, d, "pattern", "decoder Replace");
    const std::string content = string_of(c, member(c, d, "content", "decoder Replace"), "decoder Replace's content");
    if (!pattern.is_object() || !pattern.contains("String") || content != " ")
      c.fail("decoder Replace " + d.dump() + " is not supported (only a String replaced by one space)");
    r.metaspace = string_of(c, pattern["String"], "decoder Replace's pattern");
  } else if (type == "Strip") {
    if (d.value("content", std::string(" ")) != " " || d.value("stop", 0) != 0)
      c.fail("decoder Strip " + d.dump() + " is not supported (only leading spaces)");
    r.strip_leading = d.value("start", size_t{0});
  } else if (type == "Metaspace") {
    r.metaspace = d.value("replacement", std::string("\u2581"));
    const bool prepends = d.value("prepend_scheme", std::string(d.value("add_prefix_space", true) ? "always" : "never")) != "never";
    r.strip_leading = prepends ? 1 : 0;
  } else {
    c.fail("decoder \"" + type + "\" is not supported (attnsim runs ByteLevel, ByteFallback, Fuse, Replace, Strip and Metaspace)");
  }
}

// The text a vocabulary token stands for, for comparing with an added token's content: a
// byte-level vocabulary writes bytes as GPT-2 characters ("Ġ" for a space).
std::string vocab_text(const BpeModel& m, const std::string& token) {
  if (!m.byte_level) return token;
  std::string out;
  for (size_t i = 0; i < token.size();) {
    const CodeUnit u = next_unit(token, i);
    if (const auto b = char_to_byte(u.cp)) out += static_cast<char>(*b);
    else out.append(token, i, u.len);
    i += u.len;
  }
  return out;
}

// Added tokens: one id each, and an id the vocabulary also has must be the same token there
// (GPT-2's "<|endoftext|>" is both); otherwise decode would read one back as the other.
void read_added(const Ctx& c, const json& added, TokenizerSpec& spec) {
  if (added.is_null()) return;
  if (!added.is_array()) c.fail("\"added_tokens\" is not a list");
  std::unordered_map<int32_t, size_t> by_id;  // id -> index into spec.added
  size_t bytes = 0;
  for (const json& a : added) {
    const int32_t id = id_of(c, member(c, a, "id", "an added token"), "an added token");
    const std::string content = string_of(c, member(c, a, "content", "an added token"), "an added token's content");
    if (content.empty()) c.fail("added token " + std::to_string(id) + " is empty");
    if (content.size() > kMaxAddedTokenBytes)
      c.fail("added token " + std::to_string(id) + " is " + std::to_string(content.size()) +
             " bytes long; attnsim reads added tokens of up to " + std::to_string(kMaxAddedTokenBytes) + " bytes");
    if ((bytes += content.size()) > kMaxAddedBytes)
      c.fail("the added tokens hold more than " + std::to_string(kMaxAddedBytes >> 20) + " MiB of text");
    if (const auto [it, fresh] = by_id.try_emplace(id, spec.added.size()); !fresh) {
      if (spec.added[it->second].content == content) continue;  // the same entry twice
      c.fail("added tokens \"" + spec.added[it->second].content + "\" and \"" + content + "\" have the same id " +
             std::to_string(id));
    }
    const auto& tokens = spec.model.tokens;
    if (static_cast<size_t>(id) < tokens.size() && !tokens[id].empty() && tokens[id] != content &&
        vocab_text(spec.model, tokens[id]) != content)
      c.fail("added token \"" + content + "\" has id " + std::to_string(id) + ", which the vocabulary gives to \"" +
             tokens[id] + "\"");
    spec.added.push_back({id, content, a.value("special", false)});
  }
}

// BOS: the first special token of TemplateProcessing's "single" template (Llama's "<s>").
void read_bos(const Ctx& c, const json& post, TokenizerSpec& spec) {
  if (!post.is_object()) return;
  const std::string type = post.value("type", std::string());
  if (type == "Sequence" && post.contains("processors") && post["processors"].is_array()) {
    for (const json& p : post["processors"]) read_bos(c, p, spec);
    return;
  }
  if (type != "TemplateProcessing" || !post.contains("single") || !post["single"].is_array() || post["single"].empty())
    return;
  const json& first = post["single"][0];
  if (!first.is_object() || !first.contains("SpecialToken")) return;
  const std::string name = string_of(c, member(c, first["SpecialToken"], "id", "TemplateProcessing's SpecialToken"), "its id");
  const json& specials = member(c, post, "special_tokens", "TemplateProcessing");
  const json& ids = member(c, member(c, specials, name.c_str(), "TemplateProcessing's special_tokens"), "ids", name.c_str());
  if (!ids.is_array() || ids.size() != 1) c.fail("TemplateProcessing's \"" + name + "\" is not one id");
  spec.bos = id_of(c, ids[0], "TemplateProcessing's \"" + name + "\"");
}

std::string describe(const TokenizerSpec& s, int64_t vocab) {
  std::string split;
  for (const PreTokenizeStep& p : s.pre_tokenizer)
    if ((p.kind == PreTokenizeStep::ByteLevel && p.use_regex) || p.kind == PreTokenizeStep::Split)
      split = std::string(", ") + pattern_name(p.pattern) + " split";
  std::string out = s.model.byte_level      ? "byte-level BPE" + split
                    : s.model.byte_fallback ? "BPE with byte fallback (SentencePiece style)" + split
                                            : "BPE" + split;
  return out + ", " + std::to_string(vocab) + " tokens";
}

Tokenizer finish(const Ctx& c, TokenizerSpec spec) {
  spec.source = c.what;
  Tokenizer t(std::move(spec));
  if (const auto bos = t.bos_id()) {
    try {
      (void)t.token_label(*bos);
    } catch (const Error&) {
      c.fail("the BOS id " + std::to_string(*bos) + " is not a token");
    }
  }
  return t;
}

}  // namespace

Tokenizer parse_tokenizer_json(const std::string& text, const std::string& what) {
  const Ctx c{what};
  const json j = parse_json(text, what);
  if (!j.is_object()) c.fail("not a tokenizer.json (the top level is not an object)");
  TokenizerSpec spec;
  try {
    read_model(c, member(c, j, "model", "the file"), spec.model);
    read_normalizer(c, j.value("normalizer", json()), spec.normalizer);
    read_pre_tokenizer(c, j.value("pre_tokenizer", json()), spec.pre_tokenizer);
    spec.model.byte_level = std::any_of(spec.pre_tokenizer.begin(), spec.pre_tokenizer.end(),
                                        [](const PreTokenizeStep& p) { return p.kind == PreTokenizeStep::ByteLevel; });
    read_added(c, j.value("added_tokens", json()), spec);
    read_bos(c, j.value("post_processor", json()), spec);
    if (j.contains("decoder") && !j["decoder"].is_null()) read_decoder(c, j["decoder"], spec.decoder);
    else spec.decoder.byte_level = spec.model.byte_level;
  } catch (const json::exception& e) {  // a value of the wrong type where a default was read
    c.fail(std::string("unexpected layout (") + e.what() + ")");
  }
  int64_t vocab = static_cast<int64_t>(spec.model.tokens.size());
  for (const AddedToken& a : spec.added) vocab = std::max<int64_t>(vocab, a.id + int64_t{1});
  spec.kind = describe(spec, vocab);
  return finish(c, std::move(spec));
}

Tokenizer load_tokenizer_json(const std::string& path) {
  return parse_tokenizer_json(read_text_file(path, kMaxTokenizerBytes), path);
}

Tokenizer load_gpt2_files(const std::string& vocab_json, const std::string& merges_txt) {
  TokenizerSpec spec;
  read_vocab(Ctx{vocab_json}, parse_json(read_text_file(vocab_json, kMaxTokenizerBytes), vocab_json), spec.model);
  const Ctx c{merges_txt};
  const std::string merges = read_text_file(merges_txt, kMaxTokenizerBytes);
  size_t rank = 0, line_no = 0;
  for (size_t at = 0; at < merges.size();) {
    size_t end = merges.find('\n', at);
    if (end == std::string::npos) end = merges.size();
    std::string line = merges.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == line.size() || line.find(' ', sp + 1) != std::string::npos)
      c.fail("line " + std::to_string(line_no) + " \"" + line + "\" is not two tokens separated by one space");
    add_merge(c, spec.model, rank++, line.substr(0, sp), line.substr(sp + 1));
  }
  spec.model.byte_ids.fill(-1);
  PreTokenizeStep byte_level{};
  byte_level.kind = PreTokenizeStep::ByteLevel;
  spec.pre_tokenizer.push_back(byte_level);
  spec.model.byte_level = spec.decoder.byte_level = true;
  if (const auto it = spec.model.vocab.find("<|endoftext|>"); it != spec.model.vocab.end())
    spec.added.push_back({it->second, "<|endoftext|>", true});  // GPT-2's special token, as its tokenizer_config names it
  spec.kind = describe(spec, static_cast<int64_t>(spec.model.tokens.size()));
  return finish(Ctx{vocab_json + " + " + merges_txt}, std::move(spec));
}

Tokenizer load_tokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  std::error_code ec;
  if (fs::exists(d / "tokenizer.json", ec)) return load_tokenizer_json((d / "tokenizer.json").string());
  if (fs::exists(d / "vocab.json", ec) && fs::exists(d / "merges.txt", ec))
    return load_gpt2_files((d / "vocab.json").string(), (d / "merges.txt").string());
  throw Error(one_line(dir) + ": no tokenizer.json, nor vocab.json + merges.txt (a Hugging Face model folder has one or the other)");
}

}  // namespace attnsim::model::hf
