// model.* fields of a checkpoint trained on text. See text_quantity.h.
#include "lessons/text_quantity.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "engine/error.h"
#include "engine/nesting.h"
#include "engine/read_file.h"
#include "model/experiments/ablate.h"
#include "model/formats/checkpoint.h"
#include "model/training/heads.h"
#include "model/experiments/hf_syntax.h"
#include "model/text/hf_tokenizer.h"
#include "model/experiments/text_ablation.h"
#include "model/experiments/text_syntax.h"
#include "model/training/text_task.h"

namespace attnsim::lessons {

namespace fs = std::filesystem;

namespace {

// A function's static, not a namespace-scope vector: kModelFields is built from it during static
// initialisation, in another file, whose order against this one is unspecified.
const std::vector<std::string>& fields() {
  static const std::vector<std::string> names = {
    "text_loss", "text_accuracy", "text_icl", "text_previous", "text_first", "text_duplicate", "text_induction",
    "text_best", "text_best_layer", "text_best_head", "arcs_best", "arcs_best_layer", "arcs_best_head", "arcs_count",
    "arcs_head", "arcs_previous_word", "arcs_nearest_noun", "arcs_chance", "text_ablate_dloss", "text_ablate_daccuracy",
    "text_ablate_kl", "text_keep_dloss", "text_keep_daccuracy", "text_keep_kl", "heldout_loss", "unigram_loss",
    "bigram_loss", "trigram_loss", "trigram_gap", "trigram_gap_se", "heldout_icl", "heldout_icl_se", "log_heldout_loss",
    "log_icl"};
  return names;
}

constexpr int64_t kRepeat = 24;            // text_induction: sample lines of 24 tokens, twice
constexpr int64_t kMaxFileBytes = int64_t{64} << 20;

// What has been computed on one checkpoint folder.
struct TextLoaded {
  std::optional<model::hf::Tokenizer> tokenizer;
  model::Batch windows, repeated;
  std::optional<model::TextEval> eval;
  std::optional<double> accuracy;
  std::unique_ptr<model::HeadTable> text, rep;
  std::unique_ptr<model::hf::SyntaxReport> arcs;
  std::unique_ptr<model::TextAblationReport> each;  // every head alone: the order keep reads
  std::map<std::string, model::TextAblation> ablated;
};

std::map<std::string, std::shared_ptr<TextLoaded>> g_text;  // by folder; model_field holds its lock

TextLoaded& loaded(const model::Model& m, const std::string& dir) {
  auto& slot = g_text[dir];
  if (slot) return *slot;
  auto l = std::make_shared<TextLoaded>();
  if (!fs::is_regular_file(fs::path(dir) / "tokenizer.json"))
    throw Error(dir + " was not trained on text: it has no tokenizer.json (the text fields read a language model)");
  l->tokenizer = model::hf::load_tokenizer(dir);
  const model::TextStream sample = model::tokenize_lines(*l->tokenizer, read_text_file(model::heldout_sample_path(), 1 << 20));
  l->windows = model::text_windows(sample, m.config.seq_len, 24);  // 3,000 targets: a lesson's figures in seconds
  l->repeated = model::repeated_text(sample, std::min<int64_t>(kRepeat, (m.config.seq_len - 1) / 2), 32);
  slot = l;
  return *l;
}

const model::HeadTable& table(const model::Model& m, TextLoaded& l, bool repeated) {
  auto& t = repeated ? l.rep : l.text;
  if (!t) t = std::make_unique<model::HeadTable>(model::score_heads(m, repeated ? l.repeated : l.windows));
  return *t;
}

double role_of(const model::HeadScores& h, const std::string& role) {
  if (role == "previous") return h.previous;
  if (role == "first") return h.first;
  if (role == "duplicate") return h.duplicate;
  if (role == "induction") return h.induction;
  throw Error("the text roles are previous, first, duplicate and induction, not '" + role + "'");
}

const model::HeadScores& one(const model::Model& m, TextLoaded& l, const ModelSettings& s, const std::string& f,
                             bool repeated) {
  if (!s.layer || !s.head) throw Error("model." + f + " reads one head: give the model table layer and head");
  if (*s.layer < 0 || *s.layer >= m.config.layers || *s.head < 0 || *s.head >= m.config.heads)
    throw Error("head " + std::to_string(*s.layer) + "." + std::to_string(*s.head) + " is outside the model");
  return table(m, l, repeated).at(*s.layer, *s.head);
}

const model::hf::SyntaxReport& arcs(const model::Model& m, TextLoaded& l) {
  if (!l.arcs)
    l.arcs = std::make_unique<model::hf::SyntaxReport>(
        model::score_syntax_native(m, *l.tokenizer, model::hf::read_arcs(model::hf::default_arcs_path())));
  return *l.arcs;
}

size_t relation(const model::hf::SyntaxReport& r, const ModelSettings& s) {
  const std::string name = s.role.value_or("all");
  const auto it = std::find(r.relations.begin(), r.relations.end(), name);
  if (it == r.relations.end()) throw Error("no arcs of relation '" + name + "' (det, amod, nsubj, obj, all)");
  return static_cast<size_t>(it - r.relations.begin());
}

std::string heads_text(const std::vector<model::HeadRef>& heads) {
  std::string out;
  for (const auto& h : heads) out += (out.empty() ? "" : ",") + std::to_string(h.layer) + "." + std::to_string(h.head);
  return out;
}

const model::TextAblation& ablated(const model::Model& m, TextLoaded& l, std::vector<model::HeadRef> heads) {
  const std::string key = heads_text(heads);
  if (auto it = l.ablated.find(key); it != l.ablated.end()) return it->second;
  return l.ablated.emplace(key, model::ablate_heads(m, l.windows, std::move(heads))).first->second;
}

// The heads knocked out when the model keeps its `keep` most important (largest own Δloss).
std::vector<model::HeadRef> all_but(const model::Model& m, TextLoaded& l, int64_t keep) {
  const int64_t H = m.config.layers * m.config.heads;
  if (keep < 0 || keep > H) throw Error("keep " + std::to_string(keep) + " is outside 0.." + std::to_string(H) + " heads");
  if (!l.each) l.each = std::make_unique<model::TextAblationReport>(model::ablate_text(m, l.windows, false));
  std::vector<model::TextAblation> order = l.each->each;
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.dloss < b.dloss; });
  std::vector<model::HeadRef> out;
  for (int64_t k = 0; k < H - keep; ++k) out.push_back(order[static_cast<size_t>(k)].heads[0]);
  return out;
}

nlohmann::json read_json(const fs::path& path) {
  return parse_json(read_text_file(path.string(), kMaxFileBytes), path.string());
}

double report_field(const std::string& run, const std::string& f) {
  const nlohmann::json j = read_json(fs::path(run) / "heldout_report.json");
  try {
    if (f == "heldout_loss") return j.at("heldout").at("loss").get<double>();
    if (f == "heldout_icl") return j.at("heldout").at("icl").get<double>();
    if (f == "heldout_icl_se") return j.at("heldout").at("icl_se").get<double>();
    // the Kneser–Ney trigram (model/experiments/ngram.h): the stronger of the two trigrams
    if (f == "trigram_loss") return j.at("baselines").at("trigram_kn").get<double>();
    if (f == "trigram_gap") return j.at("model_minus_baseline").at("trigram_kn").at("mean").get<double>();
    if (f == "trigram_gap_se") return j.at("model_minus_baseline").at("trigram_kn").at("se").get<double>();
    return j.at("baselines").at(f == "unigram_loss" ? "unigram" : "bigram").get<double>();
  } catch (const nlohmann::json::exception&) {
    throw Error(run + "/heldout_report.json lacks " + f + " (write it with heads --corpus --json)");
  }
}

double log_field(const std::string& run, const ModelSettings& s, const std::string& f) {
  if (!s.step) throw Error("model." + f + " reads one logged step: give the model table step");
  const std::string path = (fs::path(run) / "train_log.jsonl").string();
  std::istringstream in(read_text_file(path, kMaxFileBytes));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const nlohmann::json j = parse_json(line, path);
    if (j.value("step", int64_t{-1}) != *s.step || !j.contains("heldout_loss")) continue;
    return f == "log_heldout_loss" ? j["heldout_loss"].get<double>() : j["icl"]["score"].get<double>();
  }
  throw Error(path + ": no held-out evaluation logged at step " + std::to_string(*s.step));
}

}  // namespace

const std::vector<std::string>& text_fields() { return fields(); }

bool is_text_field(const std::string& f) { return std::find(fields().begin(), fields().end(), f) != fields().end(); }

bool text_field_reads_keep(const std::string& f) { return f.rfind("text_keep_", 0) == 0; }

bool text_field_reads_run_files(const std::string& f) {
  static const std::vector<std::string> from_files = {"heldout_loss",   "unigram_loss", "bigram_loss",
                                                       "trigram_loss",   "trigram_gap",  "trigram_gap_se",
                                                       "heldout_icl",    "heldout_icl_se", "log_heldout_loss",
                                                       "log_icl"};
  return std::find(from_files.begin(), from_files.end(), f) != from_files.end();
}

Value text_field(const model::Model& m, const std::string& dir, const std::string& run, const ModelSettings& s,
                 const std::string& f) {
  if (f.rfind("log_", 0) == 0) return log_field(run, s, f);
  if (text_field_reads_run_files(f)) return report_field(run, f);
  TextLoaded& l = loaded(m, dir);
  if (f == "text_loss" || f == "text_icl") {
    if (!l.eval) l.eval = model::evaluate_text(m, l.windows);
    return f == "text_loss" ? l.eval->loss : l.eval->icl;
  }
  if (f == "text_accuracy") {
    if (!l.accuracy) l.accuracy = ablated(m, l, {}).accuracy;
    return *l.accuracy;
  }
  if (f == "text_previous") return one(m, l, s, f, false).previous;
  if (f == "text_first") return one(m, l, s, f, false).first;
  if (f == "text_duplicate") return one(m, l, s, f, false).duplicate;
  if (f == "text_induction") return one(m, l, s, f, true).induction;
  if (f.rfind("text_best", 0) == 0) {
    if (!s.role) throw Error("model." + f + " needs the model table's role (previous, first, duplicate, induction)");
    const model::HeadTable& t = table(m, l, *s.role == "induction");
    size_t top = 0;
    for (size_t i = 1; i < t.cells.size(); ++i)
      if (role_of(t.cells[i], *s.role) > role_of(t.cells[top], *s.role)) top = i;
    if (f == "text_best") return role_of(t.cells[top], *s.role);
    return static_cast<double>(f == "text_best_layer" ? static_cast<int64_t>(top) / t.heads
                                                      : static_cast<int64_t>(top) % t.heads);
  }
  if (f.rfind("arcs_", 0) == 0) {
    const model::hf::SyntaxReport& r = arcs(m, l);
    const size_t g = relation(r, s);
    if (f == "arcs_count") return static_cast<double>(r.previous_word[g].arcs);
    if (f == "arcs_previous_word") return r.previous_word[g].share();
    if (f == "arcs_nearest_noun") return r.nearest_noun[g].share();
    if (f == "arcs_chance") return r.chance[g];
    if (f == "arcs_head") {
      if (!s.layer || !s.head) throw Error("model.arcs_head reads one head: give the model table layer and head");
      if (*s.layer < 0 || *s.layer >= r.layers || *s.head < 0 || *s.head >= r.heads)
        throw Error("head " + std::to_string(*s.layer) + "." + std::to_string(*s.head) + " is outside the model");
      return r.head[g][static_cast<size_t>(*s.layer * r.heads + *s.head)].share();
    }
    size_t top = 0;  // the first in (layer, head) order among equal shares
    for (size_t i = 1; i < r.head[g].size(); ++i)
      if (r.head[g][i].hits > r.head[g][top].hits) top = i;
    if (f == "arcs_best") return r.head[g][top].share();
    return static_cast<double>(f == "arcs_best_layer" ? static_cast<int64_t>(top) / r.heads
                                                      : static_cast<int64_t>(top) % r.heads);
  }
  if (f.rfind("text_ablate_", 0) == 0 || f.rfind("text_keep_", 0) == 0) {
    std::vector<model::HeadRef> heads;
    if (f.rfind("text_ablate_", 0) == 0) {
      if (!s.ablate) throw Error("model." + f + " knocks heads out: give the model table ablate");
      heads = model::parse_heads(*s.ablate, m.config);
    } else {
      if (!s.keep) throw Error("model." + f + " keeps the most important heads: give the model table keep");
      heads = all_but(m, l, *s.keep);
    }
    const model::TextAblation& a = ablated(m, l, heads);
    if (f.size() > 6 && f.compare(f.size() - 6, 6, "_dloss") == 0) return a.dloss;
    if (f.size() > 10 && f.compare(f.size() - 10, 10, "_daccuracy") == 0) return a.daccuracy;
    return a.kl;
  }
  throw Error("unknown text field '" + f + "'");
}

}  // namespace attnsim::lessons
