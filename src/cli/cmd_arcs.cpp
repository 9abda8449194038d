// attnsim-cli arcs: the article's syntactic heads measured (model/hf_syntax.h). For each
// relation of an annotated set (an AI assistant's) (default: assets/syntax/wordnet-heldout-arcs.json), every
// head's share of arcs whose partner word it weights most, beside the baselines.
//   arcs --model DIR [--arcs FILE] [--json]
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/formats/checkpoint.h"
#include "model/pass/hf_forward.h"
#include "model/formats/hf_model.h"
#include "model/experiments/hf_syntax.h"
#include "model/training/memory.h"
#include "model/experiments/text_syntax.h"
#include "options.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct Args {
  std::string dir, arcs, mem_limit;
  bool json = false;
};

std::string pct(double share) {
  char b[16];
  std::snprintf(b, sizeof b, "%.1f%%", 100.0 * share);
  return b;
}

model::hf::SyntaxReport hf_report(const Args& a, const model::hf::ArcSet& set) {
  const model::hf::HfConfig c = model::hf::read_hf_config(a.dir);
  const model::hf::HfText text = model::hf::open_hf_text(a.dir, true);
  int64_t longest = 1;  // tokens, BOS included, of the longest sentence
  for (const auto& s : set.sentences)
    longest = std::max<int64_t>(longest, static_cast<int64_t>(text.encode(s.text, c, a.dir, nullptr).size()));
  if (longest > c.max_positions)
    throw Error("the longest annotated sentence is " + std::to_string(longest) + " tokens, more than the model's " +
                std::to_string(c.max_positions) + " positions");
  const model::hf::HfModel m = model::hf::load_hf_checked(a.dir, model::hf::predict_hf_forward_bytes(c, longest, true),
                                                        a.mem_limit.empty() ? 0 : parse_size(a.mem_limit),
                                                        "scoring the arcs");
  return model::hf::score_syntax(m, text, set);
}

// An attnsim checkpoint with its tokenizer.json (the text task's run folder).
model::hf::SyntaxReport native_report(const Args& a, const model::hf::ArcSet& set) {
  const model::ModelConfig config = model::read_checkpoint_header(a.dir).config;
  check_fits(model::predict_report_bytes(config), a.mem_limit.empty() ? 0 : parse_size(a.mem_limit),
                    "scoring the arcs", "");
  const model::hf::Tokenizer tok = model::hf::load_tokenizer(a.dir);
  return model::score_syntax_native(model::load_checkpoint(a.dir), tok, set);
}

}  // namespace

Runner add_arcs_command(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "arcs", "syntactic heads: each head's share of annotated arcs (det, amod, nsubj, obj) it finds, beside baselines");
  cmd->add_option("--model", a->dir, "a Hugging Face folder with a tokenizer, or an attnsim checkpoint trained on text "
                  "(its tokenizer.json; each sentence runs after <|endoftext|>, as it trained)")->required()->check(not_empty());
  cmd->add_option("--arcs", a->arcs, "an arcs file (default: the shipped WordNet held-out set)")->check(not_empty());
  cmd->add_option("--mem-limit", a->mem_limit, "refuse a model that needs more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "print every head's share as JSON");
  return [a] {
    const model::hf::ArcSet set = model::hf::read_arcs(a->arcs.empty() ? model::hf::default_arcs_path() : a->arcs);
    const model::hf::SyntaxReport r = model::hf::is_hf_model_dir(a->dir) ? hf_report(*a, set) : native_report(*a, set);
    auto best = [&](size_t g) {
      return static_cast<int64_t>(std::max_element(r.head[g].begin(), r.head[g].end(), [](const auto& x, const auto& y) {
                                    return x.hits < y.hits;
                                  }) - r.head[g].begin());
    };
    if (a->json) {
      nlohmann::json j{{"model", a->dir}, {"sentences", set.sentences.size()}, {"layers", r.layers}, {"heads", r.heads}};
      for (size_t g = 0; g < r.relations.size(); ++g) {
        nlohmann::json heads = nlohmann::json::array();
        for (const auto& s : r.head[g]) heads.push_back(s.share());
        const int64_t b = best(g);
        j["relations"][r.relations[g]] = {{"arcs", r.previous_word[g].arcs},
                                          {"heads", heads},
                                          {"best_head", {b / r.heads, b % r.heads}},
                                          {"best_share", r.head[g][static_cast<size_t>(b)].share()},
                                          {"previous_word", r.previous_word[g].share()},
                                          {"nearest_noun", r.nearest_noun[g].share()},
                                          {"chance", r.chance[g]}};
      }
      std::printf("%s\n", j.dump(1).c_str());
      return 0;
    }
    std::printf("%s: %zu sentences, %lld arcs; a head finds an arc when, from the later word, the earlier word it\n"
                "weights most is the partner (tokens to words as Clark et al. 2019)\n\n",
                a->dir.c_str(), set.sentences.size(), static_cast<long long>(set.arc_count()));
    Table t({"relation", "arcs", "best head", "its share", "previous word", "nearest noun", "chance"});
    for (size_t g = 0; g < r.relations.size(); ++g) {
      const int64_t b = best(g);
      t.add({r.relations[g], std::to_string(r.previous_word[g].arcs),
             std::to_string(b / r.heads) + "." + std::to_string(b % r.heads), pct(r.head[g][static_cast<size_t>(b)].share()),
             pct(r.previous_word[g].share()), pct(r.nearest_noun[g].share()), pct(r.chance[g])});
    }
    t.print();
    return 0;
  };
}

}  // namespace attnsim::cli
