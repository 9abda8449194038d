// check_lesson: runs the engine on every state a lesson shows and on every figure it states.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "engine/error.h"
#include "engine/scenario.h"
#include "engine/trace.h"
#include "model/pass/forward.h"
#include "lessons/lesson.h"
#include "lessons/model_quantity.h"
#include "lessons/player.h"
#include "lessons/prose.h"
#include "lessons/quantity.h"
#include "lessons/step_marks.h"
#include "lessons/whole_quantity.h"
#include "model/text/hf_tokenizer.h"

namespace attnsim::lessons {

namespace {

std::string step_label(const Lesson& l, size_t i) {
  return "step " + std::to_string(i + 1) + " (\"" + l.steps[i].id + "\")";
}

// The numbers a choice option's claims state: its text may show them bare, since the
// checker proves each one true (the right option) or false (the others).
std::vector<double> stated_numbers(const Quiz::Option& o) {
  std::vector<double> v;
  for (const Claim& c : o.claims) {
    for (const auto& d : {c.equals, c.at_least, c.at_most})
      if (d) v.push_back(*d);
    if (c.equals_list)
      for (int64_t x : *c.equals_list) v.push_back(static_cast<double>(x));
    if (c.head >= 0) v.push_back(static_cast<double>(c.head));
  }
  return v;
}

// What to write instead of a bare number: engine figures of the text's settings (its config,
// the shapes of its trace steps, its step's claims) that equal it. "" when none does.
std::string suggestion(const std::string& text, const BareNumber& n, const TextRef& ref,
                       const Lesson& lesson, Evaluator& eval) {
  std::vector<std::string> found;
  auto try_quantity = [&](const std::string& q, const auto& match) {
    Claim c;
    c.quantity = q;
    try {
      if (match(eval.evaluate(c, ref.base))) found.push_back("{value:" + q + "}");
    } catch (const Error&) {
    }
  };
  // Inside a tuple of numbers, "(1, 4, 6, 6)": a step's shape.
  size_t open = n.offset, close = n.offset;
  while (open > 0 && std::strchr("0123456789, ", text[open - 1])) --open;
  while (close < text.size() && std::strchr("0123456789, ", text[close])) ++close;
  if (open > 0 && text[open - 1] == '(' && close < text.size() && text[close] == ')' &&
      text.substr(open, close - open).find(',') != std::string::npos) {
    std::vector<int64_t> tuple;  // read here: a bare 0 or 1 is no BareNumber
    const std::string inner = text.substr(open, close - open);
    for (size_t i = 0; i < inner.size();) {
      if (std::isdigit(static_cast<unsigned char>(inner[i]))) {
        tuple.push_back(std::strtoll(inner.c_str() + i, nullptr, 10));
        while (i < inner.size() && std::isdigit(static_cast<unsigned char>(inner[i]))) ++i;
      } else {
        ++i;
      }
    }
    for (const char* step : kStepNames)
      try_quantity(std::string("trace.") + step + ".shape", [&](const Value& v) {
        const auto* l = std::get_if<std::vector<int64_t>>(&v);
        return l && *l == tuple;
      });
    std::string all;
    for (const auto& f : found) all += (all.empty() ? "" : " or ") + f;
    if (!found.empty()) return "; the tuple (" + inner + ") is " + all;
  }
  // "4 MiB": the number times its unit, written {value:X|MiB}.
  double target = n.value;
  std::string unit;
  {
    size_t u = n.offset + n.token.size();
    if (u < text.size() && text[u] == ' ') ++u;
    for (const char* name : {"KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB"})
      if (text.compare(u, std::strlen(name), name) == 0) {
        unit = name;
        const double f[] = {1024.0, 1048576.0, 1073741824.0, 1099511627776.0, 1e3, 1e6, 1e9, 1e12};
        const char* names[] = {"KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB"};
        for (int k = 0; k < 8; ++k)
          if (unit == names[k]) target = n.value * f[k];
      }
  }
  auto equal = [&](const Value& v) {
    const double* d = std::get_if<double>(&v);
    if (!d) return false;
    if (unit.empty()) return *d == target;
    return format_for_prose(*d, unit) == format_for_prose(target, unit);
  };
  auto with_unit = [&](std::string placeholder) {
    if (unit.empty()) return placeholder;
    placeholder.pop_back();
    return placeholder + "|" + unit + "}";
  };
  if (unit.empty())
    for (const char* f : {"batch", "tq", "tk", "d_model", "heads", "head_dim", "last_query"})
      try_quantity(std::string("config.") + f, equal);
  if (ref.step >= 0) {
    const LessonStep& s = lesson.steps[static_cast<size_t>(ref.step)];
    std::vector<const Claim*> claims;
    for (const Claim& c : s.claims) claims.push_back(&c);
    if (s.task)
      for (const Claim& c : s.task->claims) claims.push_back(&c);
    if (s.quiz && s.quiz->kind == QuizKind::Number) claims.push_back(&s.quiz->source);
    const Settings base = lesson.settings_at(static_cast<size_t>(ref.step));
    // The sizes and other figures of a claim's own tables: {value:Q@ID}.
    auto label_of = [](const Claim& c) { return c.id.empty() ? "#" + std::to_string(c.where.line) : c.id; };
    for (const Claim* c : claims) {
      std::vector<std::string> qs;
      if (quantity_uses_cost(c->quantity))
        for (const char* n : {"d_model", "heads", "head_dim", "layers", "seq", "batch", "kv_heads",
                              "dtype_bytes", "params_no_bias", "params_with_bias", "score_elements",
                              "score_bytes_layer", "score_bytes_model", "kv_cache_bytes",
                              "kv_cache_bytes_grouped"})
          qs.push_back(std::string("cost.") + n);
      if (quantity_uses_flash(c->quantity))
        for (const char* n : {"batch", "heads", "tq", "head_dim", "block_q", "block_k", "tiled_writes",
                              "standard_traffic", "tiled_traffic"})
          qs.push_back(std::string("flash.") + n);
      if (c->quantity.rfind("model.", 0) == 0)
        for (const char* n : {"step", "layer", "head", "repeat", "kv_heads", "keep", "params", "d_model", "heads", "layers", "head_dim"})
          qs.push_back(std::string("model.") + n);
      for (const auto& q : qs) {
        if (q == c->quantity) continue;
        Claim e = *c;
        e.quantity = q;
        try {
          if (equal(eval.evaluate(e, base)))
            found.push_back(with_unit("{value:" + q + "@" + label_of(*c) + "}"));
        } catch (const Error&) {
        }
      }
    }
    for (const Claim* c : claims) {
      try {
        if (!equal(eval.evaluate(*c, lesson.settings_at(static_cast<size_t>(ref.step))))) continue;
      } catch (const Error&) {
        continue;
      }
      if (!c->id.empty()) found.push_back(with_unit("{value:" + c->id + "}"));
      else found.push_back("the claim at line " + std::to_string(c->where.line) + " (give it an id)");
    }
  }
  std::string s;
  for (const auto& f : found) s += (s.empty() ? "" : " or ") + f;
  return s.empty() ? "" : "; the engine has it as " + s;
}

// Prose: every number marked, and the same figures in ko and en.
void check_prose(Lesson& lesson, Evaluator& eval, std::vector<Diagnostic>& out) {
  for (const TextRef& ref : lesson_texts(lesson)) {
    const Text& t = *ref.text;
    const std::vector<double> stated = ref.option ? stated_numbers(*ref.option) : std::vector<double>{};
    for (const auto* src : {&t.ko_src, &t.en_src}) {
      const char* lang = src == &t.ko_src ? "ko" : "en";
      for (const BareNumber& n : bare_numbers(src->text)) {
        if (std::find(stated.begin(), stated.end(), n.value) != stated.end()) continue;
        const Where w = src->where(n.offset);
        out.push_back(Diagnostic{
            lesson.path, w.line, w.column,
            ref.label + "." + lang + ": bare number '" + n.token +
                "': write {value:...} for an engine figure or {quote:" + n.token +
                "} for one quoted from the article or the literature" +
                suggestion(src->text, n, ref, lesson, eval)});
      }
    }
    const std::set<std::string> ko(t.ko_values.begin(), t.ko_values.end());
    const std::set<std::string> en(t.en_values.begin(), t.en_values.end());
    if (ko != en) {
      std::string only_ko, only_en;
      for (const auto& v : ko)
        if (!en.count(v)) only_ko += (only_ko.empty() ? "" : ", ") + v;
      for (const auto& v : en)
        if (!ko.count(v)) only_en += (only_en.empty() ? "" : ", ") + v;
      const Where w = t.en_src.where(0);
      out.push_back(Diagnostic{lesson.path, w.line, w.column,
                               ref.label + ": ko and en state different figures (only in ko: " +
                                   (only_ko.empty() ? "none" : only_ko) + "; only in en: " +
                                   (only_en.empty() ? "none" : only_en) + ")"});
    }
  }
}

// [SECTION] Baselines: a figure called "chance" or "random" is shown beside one
//
// A sentence that calls a result chance, a random guess, 우연 or 찍기 names a level; the learner
// can only judge it against that level's number. So a step whose texts use one of those words
// must show a baseline quantity (kBaselineQuantities) in one of its texts, directly
// ({value:model.chance_accuracy}), through a claim of one ({value:ID}) or under a claim's tables
// ({value:model.uniform_loss@ID}). Random weights (an initialisation, not a level) are exempt.

const std::vector<std::string> kBaselineQuantities = {"model.chance_accuracy", "model.uniform_loss",
                                                      "model.seen_accuracy", "alpha.entropy_uniform",
                                                      "model.recall_chance", "model.gist_chance",
                                                      "model.recall_present_chance", "model.arcs_chance",
                                                      "model.arcs_previous_word", "model.unigram_loss",
                                                      "model.bigram_loss", "model.trigram_loss"};

struct ChanceWord {
  size_t offset = 0;
  std::string word;
};

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string lower_ascii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

std::vector<size_t> chance_words_at(const std::string& text, std::vector<std::string>* words) {
  std::vector<size_t> at;
  const std::string low = lower_ascii(text);
  auto next_word = [&](size_t p) {  // the word after p, past spaces, hyphens and Korean 로/의
    while (p < low.size() && (low[p] == ' ' || low[p] == '-')) ++p;
    return low.substr(p, 24);
  };
  // English, whole words: chance(s), random(ly); not "random weights", "randomly initialised"
  for (const char* w : {"chance", "random"}) {
    for (size_t p = low.find(w); p != std::string::npos; p = low.find(w, p + 1)) {
      if (p > 0 && is_ascii_letter(low[p - 1])) continue;
      size_t e = p + std::strlen(w);
      while (e < low.size() && is_ascii_letter(low[e])) ++e;
      const std::string whole = low.substr(p, e - p);
      if (whole != "chance" && whole != "chances" && whole != "random" && whole != "randomly") continue;
      const std::string after = next_word(e);
      if (whole.rfind("random", 0) == 0 &&
          (after.rfind("weight", 0) == 0 || after.rfind("init", 0) == 0 || after.rfind("parameter", 0) == 0))
        continue;
      at.push_back(p);
      if (words) words->push_back(text.substr(p, e - p));
    }
  }
  // Korean: 우연, 무작위, 찍기 / 찍는 / 찍은; not 무작위 가중치, 무작위로 초기화한
  for (const char* w : {"우연", "무작위", "찍기", "찍는", "찍은", "찍어"}) {
    for (size_t p = text.find(w); p != std::string::npos; p = text.find(w, p + 1)) {
      if (std::string(w) == "무작위") {
        size_t e = p + std::strlen(w);
        for (const char* tail : {"로", "의", "한", "인"})
          if (text.compare(e, std::strlen(tail), tail) == 0) e += std::strlen(tail);
        const std::string after = next_word(e);
        if (after.rfind("가중치", 0) == 0 || after.rfind("초기", 0) == 0 || after.rfind("파라미터", 0) == 0 ||
            after.rfind("매개변수", 0) == 0)
          continue;
      }
      at.push_back(p);
      if (words) words->push_back(w);
    }
  }
  return at;
}

namespace {

// The quantity a {value:...} body shows: Q of Q@ID, a claim's quantity for an id, else itself.
std::string shown_quantity(const std::string& body, const Lesson& lesson) {
  const ValueRef ref = parse_value_ref(body);
  if (const size_t at = ref.name.find('@'); at != std::string::npos) return ref.name.substr(0, at);
  if (ref.name.find('.') != std::string::npos) return ref.name;
  for (const LessonStep& s : lesson.steps) {
    auto match = [&](const Claim& c) { return c.id == ref.name; };
    for (const Claim& c : s.claims)
      if (match(c)) return c.quantity;
    if (s.task)
      for (const Claim& c : s.task->claims)
        if (match(c)) return c.quantity;
    if (s.quiz) {
      if (match(s.quiz->source)) return s.quiz->source.quantity;
      for (const auto& o : s.quiz->options)
        for (const Claim& c : o.claims)
          if (match(c)) return c.quantity;
    }
  }
  return "";
}

void check_baselines(Lesson& lesson, std::vector<Diagnostic>& out) {
  const std::vector<TextRef> refs = lesson_texts(lesson);
  std::map<int, bool> has_baseline;  // by step (-1: the lesson's title and summary)
  for (const TextRef& ref : refs)
    for (const auto* src : {&ref.text->ko_src, &ref.text->en_src})
      for (const Mark& m : find_marks(src->text))
        if (m.kind == Mark::Kind::Value) {
          const std::string q = shown_quantity(m.body, lesson);
          if (std::find(kBaselineQuantities.begin(), kBaselineQuantities.end(), q) != kBaselineQuantities.end())
            has_baseline[ref.step] = true;
        }
  std::string names;
  for (const auto& q : kBaselineQuantities) names += (names.empty() ? "" : ", ") + ("{value:" + q + "}");
  for (const TextRef& ref : refs) {
    if (has_baseline[ref.step]) continue;
    for (const auto* src : {&ref.text->ko_src, &ref.text->en_src}) {
      std::vector<std::string> words;
      const std::vector<size_t> at = chance_words_at(src->text, &words);
      for (size_t k = 0; k < at.size(); ++k) {
        const Where w = src->where(at[k]);
        out.push_back(Diagnostic{lesson.path, w.line, w.column,
                                 ref.label + "." + (src == &ref.text->ko_src ? "ko" : "en") + ": '" + words[k] +
                                     "' names a level with no baseline beside it: show one of " + names +
                                     " (or a claim of one) in this step's texts"});
      }
    }
  }
}

}  // namespace

namespace {

// [SECTION] What a step shows: its highlight and its sequence exist in the model it opens

// The tokens the step puts in the model panel: BOS (-1 here: never matched) and the words'
// tokens, or the whole pass's sequence as panel_lesson.cpp sets it; empty for none.
std::vector<int32_t> step_tokens(const LessonStep& s, const model::Model& m, const model::hf::Tokenizer* tok) {
  if (s.sequence == kWholePassSequence) return step_whole_sequence(m, s);
  if (s.sequence.empty() || !tok) return {};
  std::vector<int32_t> out{-1};
  for (int32_t id : tok->encode(s.sequence)) out.push_back(id);
  return out;
}

template <class Report>
void check_shown(const Lesson& lesson, size_t i, Report&& report) {
  const LessonStep& s = lesson.steps[i];
  const bool marks = !s.highlight_heads.empty() || !s.highlight_token.empty() || !s.highlight_bar.empty();
  if (!marks && s.sequence.empty()) return;
  const std::string label = step_label(lesson, i);
  if (!is_model_panel(s.panel) || s.panel == "timeline") {
    report(marks ? s.highlight_where : s.where,
           label + ": " + (marks ? "highlight" : "sequence") +
               " is for the trained model's panel: give the step panel = \"model\" (it shows \"" + s.panel + "\")");
    return;
  }
  std::string dir;
  try {
    dir = step_model_dir(s);
    const model::Model& m = loaded_model(dir);
    const model::ModelConfig& c = m.config;
    const std::string name = std::filesystem::path(dir).filename().string();
    for (const HeadName& h : s.highlight_heads)
      if (h.layer >= c.layers || h.head >= c.heads)
        report(s.highlight_where, label + ": highlight.head " + std::to_string(h.layer) + "." + std::to_string(h.head) +
                                      " does not exist in " + name + " (layers 0 to " + std::to_string(c.layers - 1) +
                                      ", heads 0 to " + std::to_string(c.heads - 1) + ")");
    const bool other_tab = s.action.rfind("open-", 0) == 0;
    if (!s.highlight_heads.empty() && other_tab)
      report(s.highlight_where, label + ": highlight.head outlines the head grid, and action \"" + s.action +
                                    "\" opens another tab of the model panel");
    const bool text_model = std::filesystem::is_regular_file(std::filesystem::path(dir) / "tokenizer.json");
    if (!s.sequence.empty() && s.sequence != kWholePassSequence && !text_model)
      report(s.where, label + ": sequence \"" + one_line(s.sequence.substr(0, 40)) + "\" is words, and " + name +
                          " reads no words (no tokenizer.json): write sequence = \"" + kWholePassSequence + "\"");
    if (s.highlight_token.empty() && s.highlight_bar.empty()) return;
    std::optional<model::hf::Tokenizer> tok;
    if (text_model) tok = model::hf::load_tokenizer(dir);
    const TokenText text = token_text(tok ? &*tok : nullptr);
    if (!s.highlight_token.empty()) {
      const std::vector<int32_t> tokens = step_tokens(s, m, tok ? &*tok : nullptr);
      if (other_tab)
        report(s.highlight_where, label + ": highlight.token frames a row of the head grid, and action \"" + s.action +
                                      "\" opens another tab of the model panel");
      else if (tokens.empty())
        report(s.highlight_where, label + ": highlight.token \"" + s.highlight_token +
                                      "\" needs the step's own sequence (sequence = words, or \"" + kWholePassSequence + "\")");
      else if (!marked_position(tokens, text, s.highlight_token))
        report(s.highlight_where, label + ": highlight.token \"" + s.highlight_token + "\" is no token of the step's sequence");
    }
    if (!s.highlight_bar.empty()) {
      if (s.action != "open-sampling")
        report(s.highlight_where, label + ": highlight.bar frames a bar of the Sampling tab: give the step action = \"open-sampling\"");
      else if (!marked_token(c.vocab, text, s.highlight_bar))
        report(s.highlight_where, label + ": highlight.bar \"" + s.highlight_bar + "\" is no token of " + name + "'s vocabulary");
    }
  } catch (const Error& e) {
    report(s.where, label + ": " + e.what());
  }
}

// The lesson's title and summary are filled when a list of lessons loads (Fill::Later): a
// figure there may not need a trained model's forward passes.
void check_list_texts(Lesson& lesson, std::vector<Diagnostic>& out) {
  for (const TextRef& ref : lesson_texts(lesson)) {
    if (ref.step >= 0) continue;
    for (const auto* src : {&ref.text->ko_src, &ref.text->en_src})
      for (const Mark& m : find_marks(src->text)) {
        const std::string q = m.kind == Mark::Kind::Value ? shown_quantity(m.body, lesson) : "";
        if (q.rfind("model.", 0) != 0 && q.rfind("decode.", 0) != 0) continue;
        const Where w = src->where(m.begin);
        out.push_back(Diagnostic{lesson.path, w.line, w.column,
                                 ref.label + ": {value:" + m.body + "} reads a trained model, and a list of lessons "
                                             "shows the title and summary at once: state it in a step"});
      }
  }
}

}  // namespace

void check_lesson(const Lesson& lesson, std::vector<Diagnostic>& out) {
  Evaluator eval;
  auto report = [&](Where w, const std::string& message) {
    out.push_back(Diagnostic{lesson.path, w.line, w.column, message});
  };
  auto check_claim = [&](const Claim& c, const Settings& base, const std::string& what) {
    std::string why;
    if (!eval.holds(c, base, &why))
      report(c.where, what + ": " + c.quantity + (c.about.empty() ? "" : " (" + c.about + ")") +
                          ": " + why);
  };

  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& s = lesson.steps[i];
    const std::string label = step_label(lesson, i);
    const Settings base = lesson.settings_at(i);
    // The state the step shows must be one the engine accepts.
    try {
      const Resolved r = resolve(base);
      if (s.batch < 0 || s.batch >= r.config.batch)
        report(s.where, label + ": batch element " + std::to_string(s.batch) +
                            " does not exist (batch = " + std::to_string(r.config.batch) + ")");
      if (s.head && (*s.head < 0 || *s.head >= r.config.heads))
        report(s.where, label + ": head " + std::to_string(*s.head) + " does not exist (heads = " +
                            std::to_string(r.config.heads) + ")");
      for (int64_t row : s.rows)
        if (row < 0 || row >= r.config.tq)
          report(s.where, label + ": row " + std::to_string(row) + " is outside Tq = " + std::to_string(r.config.tq));
      for (int64_t col : s.cols)
        if (col < 0 || col >= r.config.tk)
          report(s.where, label + ": column " + std::to_string(col) + " is outside Tk = " + std::to_string(r.config.tk));
      if (s.panel == "buglab" && !find_scenario(r.preset).has_reference)
        report(s.where, label + ": panel \"buglab\" needs a bug-lab scenario (one with a correct "
                                "run beside it), not '" + r.preset + "'");
    } catch (const Error& e) {
      report(s.where, label + ": the engine refuses this step's settings: " + e.what());
      continue;
    }
    // The trace step it shows must have run in this state (not skipped, not cut off).
    if (!s.trace_step.empty() && s.panel != "cost") {
      Claim shown;
      shown.quantity = "trace." + s.trace_step + ".skipped";
      shown.equals = 0;
      try {
        const Value v = eval.evaluate(shown, base);
        if (const double* d = std::get_if<double>(&v); d && *d != 0)
          report(s.where, label + ": it shows trace step '" + s.trace_step +
                              "', which is skipped in this step's settings");
      } catch (const Error& e) {
        report(s.where, label + ": it shows trace step '" + s.trace_step + "', which does not run: " + e.what());
      }
    }
    for (const Claim& c : s.claims) check_claim(c, base, label + " claim");
    if (s.task) {
      // The goal state must be reachable, and the claims must hold there.
      const Settings goal = merge(base, s.task->goal);
      try {
        resolve(goal);
      } catch (const Error& e) {
        report(s.task->where, label + " task: the goal settings are refused by the engine: " + e.what());
      }
      if (s.task->model_goal) {
        // Doable: the claims hold with the solution knocked out; not done before trying.
        const ModelGoal& g = *s.task->model_goal;
        LiveState solved, intact;
        solved.model = intact.model = true;
        solved.ablated = g.solution;
        solved.knocked_out = head_count(g.solution);
        if (solved.knocked_out != g.knock_out)
          report(s.task->where, label + " task: the solution '" + g.solution + "' knocks out " +
                                    std::to_string(solved.knocked_out) + " heads, the goal asks for " +
                                    std::to_string(g.knock_out));
        bool all_hold_intact = !s.task->claims.empty();
        for (const Claim& c : s.task->claims) {
          check_claim(live_claim(*s.task, c, solved), goal, label + " task claim (solution " + g.solution + ")");
          std::string why;
          try {
            all_hold_intact = all_hold_intact && eval.holds(live_claim(*s.task, c, intact), goal, &why);
          } catch (const Error&) {
            all_hold_intact = false;
          }
        }
        if (all_hold_intact)
          report(s.task->where, label + " task: its claims already hold with no head knocked out");
      } else {
        for (const Claim& c : s.task->claims) check_claim(c, goal, label + " task claim");
      }
    }
    if (s.quiz) {
      const Quiz& q = *s.quiz;
      if (q.kind == QuizKind::Number) {
        std::string why;
        if (!eval.holds(q.source, base, &why))
          report(q.source.where, label + " quiz answer " + format_value(q.answer) +
                                     " disagrees with the engine (" + q.source.quantity + "): " + why);
      } else {
        // The answer is the option whose claims all hold, and it is the only one.
        for (size_t k = 0; k < q.options.size(); ++k) {
          const Quiz::Option& o = q.options[k];
          const std::string name = label + " quiz option " + std::to_string(k + 1);
          if (static_cast<int>(k + 1) == q.correct) {
            for (const Claim& c : o.claims) check_claim(c, base, name + " (the answer)");
            continue;
          }
          bool all_hold = true;
          for (const Claim& c : o.claims) all_hold = all_hold && eval.holds(c, base, nullptr);
          if (all_hold)
            report(o.where, name + " is not the answer, yet the engine confirms every claim it "
                                   "makes (a choice quiz has exactly one true option)");
        }
      }
    }
  }
  for (size_t i = 0; i < lesson.steps.size(); ++i) check_shown(lesson, i, report);
  out.insert(out.end(), lesson.fill_problems.begin(), lesson.fill_problems.end());
  Lesson copy = lesson;  // lesson_texts hands out pointers into it
  check_prose(copy, eval, out);
  check_baselines(copy, out);
  check_list_texts(copy, out);
}

}  // namespace attnsim::lessons
