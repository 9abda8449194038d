// libFuzzer target: tokenizer.json. The input is split at its first 0x00 byte: before it, the
// text of a tokenizer.json for parse_tokenizer_json; after it, a string to encode with it. Loading
// must return a tokenizer or throw attnsim::Error; encoding must return ids whose spans are in
// order inside the string, and decoding them must give tokens back or an Error, never a crash.
// The seeds (corpus/tokenizer/) are small tokenizer.json files of each family (GPT-2 ByteLevel,
// Llama 3 Split + Digits + NFC, Llama 2 byte fallback, Metaspace), each followed by a string.
#include <cstdint>
#include <string>

#include "engine/error.h"
#include "model/text/hf_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\0');
  const std::string json = input.substr(0, cut);
  const std::string text = cut == std::string::npos ? "Hello world" : input.substr(cut + 1);
  try {
    const auto tok = attnsim::model::hf::parse_tokenizer_json(json, "fuzz.json");
    std::vector<int32_t> ids;
    const auto spans = tok.encode_spans(text, &ids);
    if (spans.size() != ids.size()) __builtin_trap();
    size_t at = 0;
    for (const auto& s : spans) {
      if (s.begin < at || s.end < s.begin || s.end > text.size()) __builtin_trap();
      at = s.begin;
    }
    (void)tok.decode(ids);
    for (const int32_t id : ids) (void)tok.token_label(id);
  } catch (const attnsim::Error&) {
  }
  return 0;
}
