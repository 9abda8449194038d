// The text task's inputs for `train --task text` (model/text_task.h), checked before any work:
//
//   --corpus DIR      DIR/train.txt, DIR/heldout.txt and DIR/SHA256SUMS, as tools/corpus.py
//                     writes them; each text must match its line in SHA256SUMS
//   --tokenizer DIR   DIR/tokenizer.json (bpe-train writes one), copied into the run folder
//
// A repeated run (--recipe RUN) takes RUN/tokenizer.json and checks the corpus and the
// tokenizer against the sha256 the recipe recorded: other bytes would train another model.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "model/training/text_task.h"

namespace attnsim::cli {

struct TextCorpus {
  std::shared_ptr<const model::TextStream> train, heldout;
  std::string tokenizer_json;  // its path, to copy into the run folder
};

// Throws Error with one line: a missing file, a checksum that fails, a tokenizer that is not
// one, a line of SHA256SUMS missing.
TextCorpus load_text_corpus(const std::string& corpus_dir, const std::string& tokenizer_dir);

// Throws Error when the corpus or tokenizer differ from what `recipe_text` (model.json's
// train.text) recorded.
void check_recipe_text(const TextCorpus& corpus, const nlohmann::json& recipe_text);

}  // namespace attnsim::cli
