// The syntactic-arc scores (hf_syntax.h) of an attnsim checkpoint trained on text: each
// sentence runs as it was trained, <|endoftext|> first, through the checkpoint's own
// tokenizer.json, so its heads are measured on the inputs they learned on.
#pragma once

#include "model/experiments/hf_syntax.h"
#include "model/text/hf_tokenizer.h"
#include "model/pass/forward.h"

namespace attnsim::model {

// Throws Error when the tokenizer has no <|endoftext|> or a sentence is longer than the
// model's positions.
hf::SyntaxReport score_syntax_native(const Model& model, const hf::Tokenizer& tokenizer, const hf::ArcSet& arcs);

}  // namespace attnsim::model
