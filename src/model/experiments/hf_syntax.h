// Syntactic heads (issue 36, the article's "a head that finds the syntactically related
// word"): how often each head's attention picks a word's grammatical partner, on sentences
// annotated by hand (assets/syntax/*.json), beside baselines that know no syntax.
//
// An arc is (the later word q, its earlier partner k, relation): the noun and its determiner,
// the noun and its adjective, the verb and its subject, the object and its verb. A causal
// model's query at q can look only backwards, so every arc points back.
//
// Tokens become words as Clark et al. 2019 ("What Does BERT Look At?") do: the attention from
// a word is the mean over its tokens, the attention to a word the sum over its tokens. A head
// gets an arc right when, from q, the earlier word it weights most is k (the word q itself and
// a BOS token are not candidates). Baselines over the same arcs: the previous word, the nearest
// earlier noun, and a uniform guess among the earlier words (chance).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "model/formats/hf_model.h"
#include "model/formats/hf_text.h"

namespace attnsim::model::hf {

struct Arc {
  int32_t query, key;  // word indexes, key < query
  std::string relation;
};

struct ArcSentence {
  std::string text;
  std::vector<std::string> words, pos;  // pos: Universal Dependencies tags
  std::vector<Arc> arcs;
};

struct ArcSet {
  std::string source, annotation;
  std::vector<std::string> relations;  // in the file's order
  std::vector<ArcSentence> sentences;
  int64_t arc_count() const;
};

// Reads and checks an arcs file: words are the text's space-separated words, one tag each,
// every arc points back inside its sentence. Error naming the file and the sentence otherwise.
ArcSet read_arcs(const std::string& path);
std::string default_arcs_path();  // the shipped set under assets/syntax

// Word-to-word attention of one head: alpha (T,T) over tokens, word_of[t] the word token t
// belongs to (-1: none, e.g. BOS or a lone space), words of them. Row q: mean over q's tokens
// of the sum over each word's tokens. Returns (words, words), row-major.
std::vector<double> word_attention(const float* alpha, int64_t T, const std::vector<int32_t>& word_of, int32_t words);

// For each token of the encoded sentence, the word its last byte falls in (-1 for none).
std::vector<int32_t> words_of_tokens(const ArcSentence& s, const std::vector<Span>& spans);

struct ArcScore {
  int64_t hits = 0, arcs = 0;
  double share() const { return arcs ? static_cast<double>(hits) / static_cast<double>(arcs) : 0.0; }
};

struct SyntaxReport {
  int64_t layers = 0, heads = 0;
  std::vector<std::string> relations;  // the file's relations, then "all"
  // [relation][layer * heads + head]
  std::vector<std::vector<ArcScore>> head;
  std::vector<ArcScore> previous_word, nearest_noun;  // [relation]
  std::vector<double> chance;                          // [relation]: mean of 1 / (earlier words)
};

// Runs the model on every sentence (as HfText encodes it, BOS first for the Llama family).
SyntaxReport score_syntax(const HfModel& model, const HfText& text, const ArcSet& arcs);

// The same scoring for any model: `attend` runs one sentence and returns its tokens' spans in
// the text (an empty span for a token before it, such as BOS) and each layer's alpha (h,T,T),
// row-major. An attnsim checkpoint trained on text runs with its <|endoftext|> first, as it
// was trained (model_quantity, attnsim-cli arcs).
struct SentenceAttention {
  std::vector<Span> spans;
  std::vector<Tensor> alpha;  // per layer, (h,T,T) contiguous
};
SyntaxReport score_syntax(int64_t layers, int64_t heads, const ArcSet& arcs,
                          const std::function<SentenceAttention(const std::string& text)>& attend);

}  // namespace attnsim::model::hf
