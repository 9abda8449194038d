#include "model/experiments/hf_syntax.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/formats/checkpoint.h"
#include "engine/error.h"
#include "engine/nesting.h"
#include "engine/read_file.h"
#include "model/pass/hf_forward.h"

namespace attnsim::model::hf {

namespace {

// A hand-annotated set is a few hundred sentences at most.
constexpr int64_t kMaxArcsBytes = int64_t{4} << 20;

std::vector<std::string> split_spaces(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find(' ', at), text.size());
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool is_noun(const std::string& tag) { return tag == "NOUN" || tag == "PROPN"; }

}  // namespace

int64_t ArcSet::arc_count() const {
  int64_t n = 0;
  for (const ArcSentence& s : sentences) n += static_cast<int64_t>(s.arcs.size());
  return n;
}

std::string default_arcs_path() {
  return (std::filesystem::path(shipped_models_dir()).parent_path() / "syntax" / "wordnet-heldout-arcs.json").string();
}

ArcSet read_arcs(const std::string& path) {
  const nlohmann::json j = parse_json(read_text_file(path, kMaxArcsBytes), path);
  ArcSet set;
  try {
    set.source = j.value("source", "");
    set.annotation = j.value("annotation", "");
    for (const auto& [name, what] : j.at("relations").items()) set.relations.push_back(name);
    for (const auto& js : j.at("sentences")) {
      ArcSentence s;
      s.text = js.at("text").get<std::string>();
      s.words = js.at("words").get<std::vector<std::string>>();
      s.pos = js.at("pos").get<std::vector<std::string>>();
      const std::string where = path + ": sentence \"" + one_line(s.text) + "\"";
      if (s.words != split_spaces(s.text)) throw Error(where + ": \"words\" are not the text's space-separated words");
      if (s.pos.size() != s.words.size()) throw Error(where + ": one tag per word is needed");
      for (const auto& ja : js.at("arcs")) {
        Arc a{ja.at(0).get<int32_t>(), ja.at(1).get<int32_t>(), ja.at(2).get<std::string>()};
        if (a.key < 0 || a.key >= a.query || a.query >= static_cast<int32_t>(s.words.size()))
          throw Error(where + ": arc [" + std::to_string(a.query) + ", " + std::to_string(a.key) +
                      "] must point from a word back to an earlier one");
        if (std::find(set.relations.begin(), set.relations.end(), a.relation) == set.relations.end())
          throw Error(where + ": relation \"" + one_line(a.relation) + "\" is not among the file's relations");
        s.arcs.push_back(std::move(a));
      }
      set.sentences.push_back(std::move(s));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not an arcs file (" + e.what() + ")");
  }
  if (set.sentences.empty()) throw Error(path + ": no sentences");
  return set;
}

std::vector<int32_t> words_of_tokens(const ArcSentence& s, const std::vector<Span>& spans) {
  std::vector<size_t> word_end;  // byte just past each word
  size_t at = 0;
  for (const std::string& w : s.words) {
    word_end.push_back(at + w.size());
    at += w.size() + 1;
  }
  std::vector<int32_t> out;
  for (const Span& sp : spans) {
    int32_t w = -1;
    if (sp.end > sp.begin) {
      const size_t last = sp.end - 1;
      const size_t k = static_cast<size_t>(std::upper_bound(word_end.begin(), word_end.end(), last) - word_end.begin());
      if (k < word_end.size() && last >= word_end[k] - s.words[k].size()) w = static_cast<int32_t>(k);  // else a space
    }
    out.push_back(w);
  }
  return out;
}

std::vector<double> word_attention(const float* alpha, int64_t T, const std::vector<int32_t>& word_of, int32_t words) {
  std::vector<double> out(static_cast<size_t>(words) * words, 0.0);
  std::vector<int64_t> tokens(static_cast<size_t>(words), 0);
  for (int64_t q = 0; q < T; ++q) {
    const int32_t wq = word_of[static_cast<size_t>(q)];
    if (wq < 0) continue;
    ++tokens[static_cast<size_t>(wq)];
    for (int64_t k = 0; k < T; ++k) {
      const int32_t wk = word_of[static_cast<size_t>(k)];
      if (wk >= 0) out[static_cast<size_t>(wq) * words + wk] += alpha[q * T + k];  // sum over the key word's tokens
    }
  }
  for (int32_t w = 0; w < words; ++w)  // mean over the query word's tokens
    for (int32_t k = 0; k < words && tokens[static_cast<size_t>(w)] > 0; ++k)
      out[static_cast<size_t>(w) * words + k] /= static_cast<double>(tokens[static_cast<size_t>(w)]);
  return out;
}

SyntaxReport score_syntax(int64_t layers, int64_t heads, const ArcSet& arcs,
                          const std::function<SentenceAttention(const std::string& text)>& attend) {
  SyntaxReport r;
  r.layers = layers;
  r.heads = heads;
  r.relations = arcs.relations;
  r.relations.push_back("all");
  const size_t R = r.relations.size(), H = static_cast<size_t>(layers * heads);
  r.head.assign(R, std::vector<ArcScore>(H));
  r.previous_word.assign(R, {});
  r.nearest_noun.assign(R, {});
  r.chance.assign(R, 0.0);
  auto count = [](ArcScore& s, bool hit) {
    ++s.arcs;
    s.hits += hit ? 1 : 0;
  };
  for (const ArcSentence& s : arcs.sentences) {
    const SentenceAttention f = attend(s.text);
    const std::vector<int32_t> word_of = words_of_tokens(s, f.spans);
    const int32_t W = static_cast<int32_t>(s.words.size());
    const int64_t T = static_cast<int64_t>(f.spans.size());
    // each arc's relation, and its nearest earlier noun (-1: none)
    std::vector<size_t> rel;
    std::vector<int32_t> noun;
    for (const Arc& a : s.arcs) {
      rel.push_back(static_cast<size_t>(std::find(arcs.relations.begin(), arcs.relations.end(), a.relation) -
                                        arcs.relations.begin()));
      noun.push_back(-1);
      for (int32_t j = a.query - 1; j >= 0 && noun.back() < 0; --j)
        if (is_noun(s.pos[static_cast<size_t>(j)])) noun.back() = j;
      for (const size_t g : {rel.back(), R - 1}) {
        count(r.previous_word[g], a.key == a.query - 1);
        count(r.nearest_noun[g], noun.back() == a.key);
        r.chance[g] += 1.0 / a.query;
      }
    }
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t h = 0; h < heads; ++h) {
        const std::vector<double> wa = word_attention(f.alpha[static_cast<size_t>(l)].f32() + h * T * T, T, word_of, W);
        for (size_t i = 0; i < s.arcs.size(); ++i) {
          const Arc& a = s.arcs[i];
          const double* row = wa.data() + static_cast<size_t>(a.query) * W;
          int32_t best = 0;  // the earlier word weighted most; a tie goes to the nearer word
          for (int32_t j = 1; j < a.query; ++j)
            if (row[j] >= row[best]) best = j;
          for (const size_t g : {rel[i], R - 1}) count(r.head[g][static_cast<size_t>(l * heads + h)], best == a.key);
        }
      }
  }
  for (size_t g = 0; g < R; ++g)
    if (r.previous_word[g].arcs) r.chance[g] /= static_cast<double>(r.previous_word[g].arcs);
  return r;
}

SyntaxReport score_syntax(const HfModel& model, const HfText& text, const ArcSet& arcs) {
  return score_syntax(model.config.layers, model.config.heads, arcs, [&](const std::string& sentence) {
    SentenceAttention a;
    const std::vector<int32_t> ids = text.encode(sentence, model.config, "the model folder", &a.spans);
    HfForward f = hf_forward(model, ids);
    a.alpha = std::move(f.alpha);
    return a;
  });
}

}  // namespace attnsim::model::hf
