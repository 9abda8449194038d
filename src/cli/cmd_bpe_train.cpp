// attnsim-cli bpe-train: learn a byte-level BPE from a corpus (model/hf_bpe_train.h) and write
// it as a Hugging Face GPT-2 tokenizer folder: tokenizer.json, vocab.json, merges.txt.
//   bpe-train --corpus train.txt --merges 4000 --out tok/ [--heldout heldout.txt] [--force]
// The tokenizer is read back through the same parser every model folder's goes through and
// tried on the corpus and the held-out text (bytes per token, and whether decoding gives the
// text back byte for byte) before anything is written: the folder is written whole, and only
// once the tokenizer in it is known to load and to encode what it learned from.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "engine/atomic_file.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/text/hf_bpe_train.h"
#include "model/text/hf_tokenizer.h"
#include "model/training/memory.h"
#include "options.h"
#include "staged_out.h"

namespace attnsim::cli {

namespace {

struct Args {
  std::string corpus, heldout, out, mem_limit;
  int64_t merges = 4000;
  bool force = false, json = false;
};

struct Fit {
  int64_t bytes = 0, tokens = 0;
  bool round_trip = true;
};

// Calls f(line) for each line of the text, its "\n" included: the model sees lines.
template <class F>
void for_each_line(const std::string& text, F f) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    f(text.substr(at, end - at));
    at = end;
  }
}

// Encodes `text` a line at a time, checking each comes back whole.
Fit fit(const model::hf::Tokenizer& tok, const std::string& text) {
  Fit f;
  for_each_line(text, [&](const std::string& line) {
    const std::vector<int32_t> ids = tok.encode(line);
    f.bytes += static_cast<int64_t>(line.size());
    f.tokens += static_cast<int64_t>(ids.size());
    f.round_trip = f.round_trip && tok.decode(ids) == line;
  });
  return f;
}

// fit's memory is that of its longest line.
int64_t longest_line(const std::string& text) {
  size_t longest = 0;
  for_each_line(text, [&](const std::string& line) { longest = std::max(longest, line.size()); });
  return static_cast<int64_t>(longest);
}

nlohmann::json fit_json(const Fit& f) {
  return {{"bytes", f.bytes}, {"tokens", f.tokens}, {"bytes_per_token", f.tokens ? double(f.bytes) / double(f.tokens) : 0.0},
          {"round_trip", f.round_trip}};
}

}  // namespace

Runner add_bpe_train_command(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("bpe-train", "learn a byte-level BPE (GPT-2's form) from a corpus and write a tokenizer folder");
  cmd->add_option("--corpus", a->corpus, "UTF-8 text to learn from (tools/corpus.py writes one)")->required()->check(not_empty());
  cmd->add_option("--merges", a->merges, "merges to learn (the vocabulary is 256 bytes + merges + <|endoftext|>)")
      ->capture_default_str()->check(whole_number(1, model::hf::kMaxBpeMerges));
  cmd->add_option("--heldout", a->heldout, "text never learned from, to report bytes per token and the round trip on")
      ->check(not_empty());
  cmd->add_option("--out", a->out, "folder to write tokenizer.json, vocab.json and merges.txt into")->required()->check(not_empty());
  cmd->add_flag("--force", a->force, "replace a folder that is not empty");
  cmd->add_option("--mem-limit", a->mem_limit, "refuse a corpus whose training needs more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "print the summary as JSON");
  return [a] {
    check_writable_folder(a->out, a->force);  // before any work
    const std::string text = model::hf::read_text_to_encode(a->corpus);
    const std::string heldout = a->heldout.empty() ? "" : model::hf::read_text_to_encode(a->heldout);
    const int64_t mem_limit = a->mem_limit.empty() ? 0 : parse_size(a->mem_limit);
    const model::hf::BpeTraining bpe = model::hf::train_bpe(text, a->merges, mem_limit);
    const std::string tokenizer_json = model::hf::tokenizer_json(bpe);
    const model::hf::Tokenizer tok = model::hf::parse_tokenizer_json(tokenizer_json, a->out + "/tokenizer.json");
    // the texts held, and the longest line: its copy, its tokens and what they decode to
    const int64_t line = std::max(longest_line(text), longest_line(heldout));
    check_fits((Size(static_cast<int64_t>(text.size() + heldout.size())) + Size(line) * 2 +
                       tok.predict_encode_bytes(line)).value(),
                      mem_limit, "trying the learned tokenizer on the corpus", "learn from a corpus with shorter lines");
    nlohmann::json j{{"out", a->out},
                     {"words", bpe.words},
                     {"distinct_words", bpe.distinct_words},
                     {"merges", bpe.merges.size()},
                     {"vocab", tok.vocab_size()},
                     {"corpus", fit_json(fit(tok, text))}};
    if (!heldout.empty()) j["heldout"] = fit_json(fit(tok, heldout));
    run_staged(a->out, a->force, [&](const std::string& dir) {
      write_file_atomically(dir + "/tokenizer.json", tokenizer_json);
      write_file_atomically(dir + "/vocab.json", model::hf::vocab_json(bpe));
      write_file_atomically(dir + "/merges.txt", model::hf::merges_txt(bpe));
    });
    if (a->json) {
      std::printf("%s\n", j.dump(1).c_str());
      return 0;
    }
    std::printf("%s: %lld merges learned from %lld words (%lld distinct); %lld tokens with <|endoftext|>\n", a->out.c_str(),
                static_cast<long long>(bpe.merges.size()), static_cast<long long>(bpe.words),
                static_cast<long long>(bpe.distinct_words), static_cast<long long>(tok.vocab_size()));
    for (const char* part : {"corpus", "heldout"})
      if (j.contains(part))
        std::printf("%-8s %.3f bytes per token (%lld bytes, %lld tokens), round trip %s\n", part,
                    j[part]["bytes_per_token"].get<double>(), static_cast<long long>(j[part]["bytes"].get<int64_t>()),
                    static_cast<long long>(j[part]["tokens"].get<int64_t>()), j[part]["round_trip"].get<bool>() ? "exact" : "FAILED");
    return 0;
  };
}

}  // namespace attnsim::cli
