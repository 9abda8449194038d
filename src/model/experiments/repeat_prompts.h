// Issue 46's behavioural prompts: a sentence whose end repeats something said before it, where
// copying gives the next word. The teacher's "the cat sat on the mat. the cat sat on the"
// should continue with " mat"; five more repeat a person's name, first name then surname, and
// stop after the first name the second time. A model that copies what followed an earlier
// occurrence (an induction head at work) puts the expected word first.
//
// Each prompt runs after <|endoftext|>, as the text task's windows start. The expected word
// may be several tokens: its first token is what is scored.
#pragma once

#include <string>
#include <vector>

#include "model/formats/toy_model.h"
#include "model/text/hf_tokenizer.h"

namespace attnsim::model {

struct RepeatPrompt {
  std::string text, expected;  // the prompt, and the word copying gives (" mat")
};
// The six prompts, in order; the first is the teacher's.
const std::vector<RepeatPrompt>& repeat_prompts();

struct PromptResult {
  RepeatPrompt prompt;
  std::string top;       // the model's first choice, as text
  double p_expected = 0; // the probability of the expected word's first token
  int64_t rank = 0;      // its rank among every token (1: first)
};
// Throws Error for a tokenizer without <|endoftext|> or a prompt longer than the model's
// positions.
std::vector<PromptResult> run_repeat_prompts(const Model& model, const hf::Tokenizer& tokenizer);

}  // namespace attnsim::model
