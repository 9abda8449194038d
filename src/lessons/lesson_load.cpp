// Loading a lesson file: TOML syntax, known and missing keys, types, both languages, and
// names that must exist (panels, trace steps, scenarios, bugs, quantities). The engine is
// not run here; check_lesson (lesson_check.cpp) does that.
//
// Index
//   [SECTION] Reader: one TOML table, its keys marked as read
//   [SECTION] Settings, cost and flash tables
//   [SECTION] Claims, tasks and quizzes
//   [SECTION] Steps and the lesson
#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "engine/bugs.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/mask.h"
#include "engine/nesting.h"
#include "engine/read_file.h"
#include "engine/scenario.h"
#include "engine/trace.h"
#include "lessons/lesson.h"
#include "lessons/quantity.h"

namespace attnsim::lessons {

std::string Diagnostic::str() const {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line) + ":" + std::to_string(column);
  return one_line(s + ": " + message);  // ids and paths may hold control characters
}

Lang parse_lang(const std::string& code) {
  if (code == "ko") return Lang::Ko;
  if (code == "en") return Lang::En;
  throw Error("unknown language '" + code + "' (valid: ko, en)");
}

bool is_panel_name(const std::string& name) {
  for (const char* p : kPanelNames)
    if (name == p) return true;
  return false;
}

namespace {

// [SECTION] Reader: one TOML table, its keys marked as read ---------------------------------

Where where_of(const toml::node& node) {
  const auto& b = node.source().begin;
  return Where{static_cast<int>(b.line), static_cast<int>(b.column)};
}

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}

// Where each byte of a TOML string's value stands in the file, so that a number found in
// prose is reported at its own line and column. `begin` is where toml++ puts the string (its
// opening quote; columns count code points, as toml++ does).
Text::Source map_string(const std::string& file, const std::vector<size_t>& line_starts,
                        Where begin, const std::string& value) {
  Text::Source src;
  src.text = value;
  if (begin.line < 1 || static_cast<size_t>(begin.line) > line_starts.size()) {
    src.at.assign(value.size() + 1, begin);
    return src;
  }
  size_t pos = line_starts[static_cast<size_t>(begin.line - 1)];
  for (int col = 1; col < begin.column && pos < file.size();) {
    ++pos;
    if (pos < file.size() && (static_cast<unsigned char>(file[pos]) & 0xC0) != 0x80) ++col;
  }
  Where here = begin;
  auto advance = [&]() {  // one byte of the file
    const unsigned char c = static_cast<unsigned char>(file[pos]);
    ++pos;
    if (c == '\n') {
      ++here.line;
      here.column = 1;
    } else if (pos < file.size() && (static_cast<unsigned char>(file[pos]) & 0xC0) != 0x80) {
      ++here.column;
    }
  };
  const bool basic = file.compare(pos, 1, "\"") == 0;
  const bool triple = file.compare(pos, 3, "\"\"\"") == 0 || file.compare(pos, 3, "'''") == 0;
  for (int i = 0; i < (triple ? 3 : 1) && pos < file.size(); ++i) advance();
  if (triple && pos < file.size() && file[pos] == '\r') advance();
  if (triple && pos < file.size() && file[pos] == '\n') advance();
  for (size_t v = 0; v < value.size(); ++v) {
    if (pos >= file.size()) {
      src.at.push_back(here);
      continue;
    }
    if (file[pos] == '\r' && value[v] != '\r') advance();
    if (basic && pos < file.size() && file[pos] == '\\') {
      const Where escape = here;
      advance();
      const char e = pos < file.size() ? file[pos] : 0;
      if (e == '\n' || e == '\r' || e == ' ' || e == '\t') {  // a line-ending backslash
        while (pos < file.size() && std::isspace(static_cast<unsigned char>(file[pos]))) advance();
        --v;
        continue;
      }
      const int hex = e == 'u' ? 4 : e == 'U' ? 8 : 0;
      for (int i = 0; i <= hex && pos < file.size(); ++i) advance();
      src.at.push_back(escape);
      if (hex) {  // the code point's UTF-8 bytes all stand at the escape
        while (v + 1 < value.size() && (static_cast<unsigned char>(value[v + 1]) & 0xC0) == 0x80) {
          src.at.push_back(escape);
          ++v;
        }
      }
      continue;
    }
    src.at.push_back(here);
    advance();
  }
  src.at.push_back(here);
  return src;
}

struct Context {
  std::string file;
  std::vector<Diagnostic>* out;
  const std::string* source = nullptr;   // the file's text
  std::vector<size_t> line_starts;       // byte offset of each line
  void error(Where w, const std::string& message) const {
    out->push_back(Diagnostic{file, w.line, w.column, message});
  }
};

class Reader {
 public:
  // `name` is the table's dotted path for messages ("step 3 (\"budget\").quiz").
  Reader(const Context& ctx, const toml::table& table, std::string name)
      : ctx_(ctx), table_(table), name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  Where where() const { return where_of(table_); }
  const Context& ctx() const { return ctx_; }

  // The node at `key` (marked as read), or nullptr when absent. `required` reports absence.
  const toml::node* get(const std::string& key, bool required = false) {
    read_.insert(key);
    const toml::node* n = table_.get(key);
    if (!n && required) ctx_.error(where(), "missing key '" + key + "' in " + name_);
    return n;
  }
  bool has(const std::string& key) const { return table_.contains(key); }

  std::optional<std::string> string(const std::string& key, bool required = false) {
    const toml::node* n = get(key, required);
    if (!n) return std::nullopt;
    if (auto v = n->value<std::string>(); v && n->is_string()) return *v;
    wrong_type(*n, key, "a string");
    return std::nullopt;
  }
  std::optional<int64_t> integer(const std::string& key, bool required = false) {
    const toml::node* n = get(key, required);
    if (!n) return std::nullopt;
    if (n->is_integer()) return n->as_integer()->get();
    wrong_type(*n, key, "an integer");
    return std::nullopt;
  }
  std::optional<double> number(const std::string& key, bool required = false) {
    const toml::node* n = get(key, required);
    if (!n) return std::nullopt;
    if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
    if (n->is_floating_point()) return n->as_floating_point()->get();
    wrong_type(*n, key, "a number");
    return std::nullopt;
  }
  std::optional<bool> boolean(const std::string& key, bool required = false) {
    const toml::node* n = get(key, required);
    if (!n) return std::nullopt;
    if (n->is_boolean()) return n->as_boolean()->get();
    wrong_type(*n, key, "a boolean (true or false)");
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> int_list(const std::string& key, bool required = false) {
    const toml::node* n = get(key, required);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    std::vector<int64_t> out;
    if (a) {
      for (const auto& e : *a) {
        if (!e.is_integer()) {
          wrong_type(e, key + " element", "an integer");
          return std::nullopt;
        }
        out.push_back(e.as_integer()->get());
      }
      return out;
    }
    wrong_type(*n, key, "an array of integers");
    return std::nullopt;
  }
  std::optional<std::vector<std::string>> string_list(const std::string& key,
                                                      bool required = false) {
    const toml::node* n = get(key, required);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    std::vector<std::string> out;
    if (a) {
      for (const auto& e : *a) {
        if (!e.is_string()) {
          wrong_type(e, key + " element", "a string");
          return std::nullopt;
        }
        out.push_back(e.as_string()->get());
      }
      return out;
    }
    wrong_type(*n, key, "an array of strings");
    return std::nullopt;
  }
  // A sub-table, or nullptr (reported when present with another type, or required).
  const toml::table* table(const std::string& key, bool required = false) {
    const toml::node* n = get(key, required);
    if (!n) return nullptr;
    if (const toml::table* t = n->as_table()) return t;
    wrong_type(*n, key, "a table");
    return nullptr;
  }
  // A table of the two languages: { ko = "...", en = "..." }. Both are required.
  Text text(const std::string& key, bool required = true) {
    Text t;
    const toml::table* tab = table(key, required);
    if (!tab) return t;
    Reader r(ctx_, *tab, name_ + "." + key);
    if (auto ko = r.string("ko")) t.ko = *ko;
    if (auto en = r.string("en")) t.en = *en;
    if (ctx_.source) {
      if (const toml::node* n = tab->get("ko"))
        t.ko_src = map_string(*ctx_.source, ctx_.line_starts, where_of(*n), t.ko);
      if (const toml::node* n = tab->get("en"))
        t.en_src = map_string(*ctx_.source, ctx_.line_starts, where_of(*n), t.en);
    }
    if (!tab->contains("ko") || !tab->contains("en")) {
      const char* missing = !tab->contains("ko") ? "ko" : "en";
      ctx_.error(where_of(*tab), "missing language '" + std::string(missing) + "' in " +
                                     name_ + "." + key + " (every text needs ko and en)");
    } else if ((t.ko.empty() || t.en.empty()) && required) {
      ctx_.error(where_of(*tab), "empty text in " + name_ + "." + key);
    }
    r.finish();
    return t;
  }
  // Reports keys present but never read.
  void finish(const std::vector<std::string>& extra_known = {}) {
    std::vector<std::string> known(read_.begin(), read_.end());
    known.insert(known.end(), extra_known.begin(), extra_known.end());
    for (const auto& [k, v] : table_) {
      const std::string key(k.str());
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string list;
      std::vector<std::string> sorted = known;
      std::sort(sorted.begin(), sorted.end());
      for (const auto& n : sorted) list += (list.empty() ? "" : ", ") + n;
      ctx_.error(where_of(v), "unknown key '" + key + "' in " + name_ + " (known: " + list + ")");
    }
  }
  void wrong_type(const toml::node& n, const std::string& key, const char* expected) {
    ctx_.error(where_of(n), "'" + key + "' in " + name_ + " must be " + expected + ", got " +
                                type_name(n));
  }

 private:
  const Context& ctx_;
  const toml::table& table_;
  std::string name_;
  std::set<std::string> read_;
};

// [SECTION] Settings, cost and flash tables -------------------------------------------------

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

Settings read_settings(Reader& r) {
  Settings s;
  if (auto v = r.string("preset")) {
    const auto names = scenario_names();
    if (std::find(names.begin(), names.end(), *v) == names.end())
      r.ctx().error(where_of(*r.get("preset")),
                    "unknown scenario '" + *v + "' in " + r.name() + " (known: " + join(names) + ")");
    else
      s.preset = v;
  }
  s.batch = r.integer("batch");
  s.tq = r.integer("tq");
  s.tk = r.integer("tk");
  s.d_model = r.integer("d_model");
  s.heads = r.integer("heads");
  s.seed = r.integer("seed");
  s.bias = r.boolean("bias");
  s.wo_identity = r.boolean("wo_identity");
  s.train = r.boolean("train");
  s.cross = r.boolean("cross");
  s.dropout = r.number("dropout");
  s.input_scale = r.number("input_scale");
  if (auto v = r.string("mask")) {
    try {
      parse_mask_spec(*v == "none" ? "" : *v);
      s.mask = v;
    } catch (const Error& e) {
      r.ctx().error(where_of(*r.get("mask")), "bad mask in " + r.name() + ": " + e.what());
    }
  }
  if (auto v = r.string("bug")) {
    try {
      if (*v != "none") parse_bug(*v);
      s.bug = v;
    } catch (const Error& e) {
      r.ctx().error(where_of(*r.get("bug")), std::string(e.what()) + " in " + r.name());
    }
  }
  s.sentences = r.string_list("sentences");
  s.key_sentences = r.string_list("key_sentences");
  if (auto v = r.string("policy")) {
    try {
      parse_cache_policy(*v);
      s.policy = v;
    } catch (const Error& e) {
      r.ctx().error(where_of(*r.get("policy")), std::string(e.what()) + " in " + r.name());
    }
  }
  return s;
}

Settings read_settings_table(Reader& parent, const std::string& key) {
  const toml::table* t = parent.table(key);
  if (!t) return {};
  Reader r(parent.ctx(), *t, parent.name() + "." + key);
  Settings s = read_settings(r);
  r.finish();
  return s;
}

CostSettings read_cost_table(Reader& parent, const std::string& key) {
  CostSettings c;
  const toml::table* t = parent.table(key);
  if (!t) return c;
  Reader r(parent.ctx(), *t, parent.name() + "." + key);
  c.d_model = r.integer("d_model");
  c.heads = r.integer("heads");
  c.head_dim = r.integer("head_dim");
  c.layers = r.integer("layers");
  c.seq = r.integer("seq");
  c.batch = r.integer("batch");
  c.kv_heads = r.integer("kv_heads");
  if (auto v = r.string("dtype")) {
    try {
      parse_cost_dtype(*v);
      c.dtype = v;
    } catch (const Error& e) {
      r.ctx().error(where_of(*r.get("dtype")), std::string(e.what()) + " in " + r.name());
    }
  }
  r.finish();
  return c;
}

FlashSettings read_flash_table(Reader& parent, const std::string& key) {
  FlashSettings f;
  const toml::table* t = parent.table(key);
  if (!t) return f;
  Reader r(parent.ctx(), *t, parent.name() + "." + key);
  f.batch = r.integer("batch");
  f.heads = r.integer("heads");
  f.tq = r.integer("tq");
  f.tk = r.integer("tk");
  f.head_dim = r.integer("head_dim");
  f.block_q = r.integer("block_q");
  f.block_k = r.integer("block_k");
  r.finish();
  return f;
}

ModelSettings read_model_table(Reader& parent, const std::string& key) {
  ModelSettings m;
  const toml::table* t = parent.table(key);
  if (!t) return m;
  Reader r(parent.ctx(), *t, parent.name() + "." + key);
  m.checkpoint = r.string("checkpoint");
  m.step = r.integer("step");
  m.layer = r.integer("layer");
  m.head = r.integer("head");
  m.ablate = r.string("ablate");
  m.repeat = r.integer("repeat");
  m.role = r.string("role");
  m.kv_heads = r.integer("kv_heads");
  m.keep = r.integer("keep");
  m.runs = r.string("runs");
  m.of = r.string("of");
  m.prompts = r.integer("prompts");
  m.temperature = r.number("temperature");
  m.top_k = r.integer("top_k");
  m.top_p = r.number("top_p");
  m.seed = r.integer("seed");
  r.finish();
  return m;
}

// [SECTION] Claims, tasks and quizzes --------------------------------------------------------

// The quantity and its tables (shared by claims and number quizzes).
void read_quantity(Reader& r, Claim& c, bool required) {
  if (auto q = r.string("quantity", required)) {
    std::string why;
    if (!is_known_quantity(*q, &why))
      r.ctx().error(where_of(*r.get("quantity")), why + " in " + r.name());
    c.quantity = *q;
  }
  c.settings = read_settings_table(r, "scenario");
  c.against = read_settings_table(r, "against");
  c.cost = read_cost_table(r, "cost");
  c.flash = read_flash_table(r, "flash");
  c.model = read_model_table(r, "model");
  if (auto h = r.integer("head")) c.head = *h;
  if (auto s = r.string("step_b")) {
    if (!is_step_name(*s))
      r.ctx().error(where_of(*r.get("step_b")), "unknown trace step '" + *s + "' in " + r.name());
    c.step_b = *s;
  }
  if (c.quantity.empty()) return;
  if (quantity_uses_cost(c.quantity) && !r.has("cost"))
    r.ctx().error(r.where(), "missing key 'cost' in " + r.name() + " (" + c.quantity +
                                 " needs the cost model's sizes)");
  if (quantity_uses_flash(c.quantity) && !r.has("flash"))
    r.ctx().error(r.where(), "missing key 'flash' in " + r.name() + " (" + c.quantity +
                                 " needs the IO model's sizes)");
  if (quantity_uses_against(c.quantity) && !r.has("against"))
    r.ctx().error(r.where(), "missing key 'against' in " + r.name() + " (" + c.quantity +
                                 " compares with a second run)");
  if (c.quantity.rfind("ablate.", 0) == 0 && !r.has("head"))
    r.ctx().error(r.where(), "missing key 'head' in " + r.name() + " (" + c.quantity +
                                 " zeroes one head)");
  if (c.quantity.rfind("pair.", 0) == 0 && c.step_b.empty())
    r.ctx().error(r.where(), "missing key 'step_b' in " + r.name() + " (" + c.quantity +
                                 " compares two steps)");
}

// A claim or quiz id: what {value:ID} names in the text (no dots: those are quantities).
std::string read_id(Reader& r) {
  auto id = r.string("id");
  if (!id) return "";
  const bool ok = !id->empty() && std::all_of(id->begin(), id->end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (!ok)
    r.ctx().error(where_of(*r.get("id")), "id '" + *id + "' in " + r.name() +
                                              " must be letters, digits, '_' or '-' (no dots)");
  return *id;
}

Claim read_claim(Reader& r) {
  Claim c;
  c.where = r.where();
  c.id = read_id(r);
  read_quantity(r, c, true);
  if (auto a = r.string("about")) c.about = *a;
  int conditions = 0;
  if (const toml::node* n = r.get("equals")) {
    ++conditions;
    if (n->is_integer()) c.equals = static_cast<double>(n->as_integer()->get());
    else if (n->is_floating_point()) c.equals = n->as_floating_point()->get();
    else if (n->is_string()) c.equals_text = n->as_string()->get();
    else if (n->is_array()) c.equals_list = r.int_list("equals");
    else r.wrong_type(*n, "equals", "a number, a string or an array of integers");
  }
  if (auto v = r.number("at_least")) ++conditions, c.at_least = v;
  if (auto v = r.number("at_most")) ++conditions, c.at_most = v;
  if (auto v = r.number("tolerance")) c.tolerance = *v;
  if (conditions == 0 && c.id.empty())
    r.ctx().error(r.where(), "missing key 'equals' (or 'at_least' / 'at_most') in " + r.name() +
                                 " (only a claim with an id may state no condition)");
  r.finish();
  return c;
}

std::vector<Claim> read_claims(Reader& parent, const std::string& key) {
  std::vector<Claim> claims;
  const toml::node* n = parent.get(key);
  if (!n) return claims;
  const toml::array* a = n->as_array();
  if (!a) {
    parent.wrong_type(*n, key, "an array of tables ([[...]])");
    return claims;
  }
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* t = (*a)[i].as_table();
    if (!t) {
      parent.wrong_type((*a)[i], key, "a table");
      continue;
    }
    Reader r(parent.ctx(), *t, parent.name() + "." + key + "[" + std::to_string(i + 1) + "]");
    claims.push_back(read_claim(r));
  }
  return claims;
}

Task read_task(Reader& r) {
  Task t;
  t.where = r.where();
  t.prompt = r.text("prompt");
  t.done = r.text("done");
  t.hint = r.text("hint", false);
  t.goal = read_settings_table(r, "goal");
  if (auto s = r.string("goal_step")) {
    if (!is_step_name(*s))
      r.ctx().error(where_of(*r.get("goal_step")), "unknown trace step '" + *s + "' in " + r.name());
    t.goal_step = s;
  }
  if (const toml::table* mt = r.table("model")) {
    Reader m(r.ctx(), *mt, r.name() + ".model");
    ModelGoal g;
    if (auto k = m.integer("knock_out", true)) {
      if (*k < 1) m.ctx().error(where_of(*m.get("knock_out")), "knock_out must be at least 1 in " + m.name());
      g.knock_out = *k;
    }
    if (auto s = m.string("solution", true)) g.solution = *s;
    m.finish();
    t.model_goal = g;
  }
  if (t.goal.empty() && !t.goal_step && !r.has("goal") && !t.model_goal)
    r.ctx().error(r.where(), "missing key 'goal' in " + r.name() +
                                 " (the setting the learner is asked to change)");
  t.claims = read_claims(r, "claim");
  if (t.model_goal)
    for (const Claim& c : t.claims) {
      if (c.quantity.rfind("model.", 0) != 0)
        r.ctx().error(c.where, "a model task's claims are model.* quantities (" + c.quantity + " in " + r.name() + ")");
      else if (c.model.ablate)
        r.ctx().error(c.where, "a model task's claim takes the learner's knocked-out heads: remove its ablate (in " +
                                   r.name() + ")");
    }
  r.finish();
  return t;
}

// [[step.quiz.option]]: text = { ko, en } and [[step.quiz.option.claim]], at least one: the
// engine facts that would make the option true.
void read_options(Reader& r, Quiz& q) {
  const toml::node* n = r.get("option", true);
  if (!n) return;
  const toml::array* a = n->as_array();
  if (!a) {
    r.wrong_type(*n, "option", "an array of tables ([[step.quiz.option]])");
    return;
  }
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* t = (*a)[i].as_table();
    if (!t) {
      r.wrong_type((*a)[i], "option", "a table");
      continue;
    }
    Reader orr(r.ctx(), *t, r.name() + ".option[" + std::to_string(i + 1) + "]");
    Quiz::Option o;
    o.where = orr.where();
    o.text = orr.text("text");
    o.claims = read_claims(orr, "claim");
    if (o.claims.empty())
      r.ctx().error(o.where, "missing key 'claim' in " + orr.name() +
                                 " (every option carries the engine claims that would make it true)");
    orr.finish();
    q.options.push_back(std::move(o));
  }
  if (q.options.size() < 2)
    r.ctx().error(where_of(*n), "a choice quiz needs at least 2 options in " + r.name());
}

Quiz read_quiz(Reader& r) {
  Quiz q;
  q.where = r.where();
  q.question = r.text("question");
  q.explanation = r.text("explanation");
  const auto kind = r.string("kind", true);
  if (kind == "number") {
    q.kind = QuizKind::Number;
    q.source.id = read_id(r);
    read_quantity(r, q.source, true);
    q.source.where = r.where();
    if (const toml::node* n = r.get("answer", true)) {
      if (n->is_integer()) q.answer = static_cast<double>(n->as_integer()->get());
      else if (n->is_floating_point()) q.answer = n->as_floating_point()->get();
      else r.wrong_type(*n, "answer", "a number");
      q.source.where = where_of(*n);
    }
    if (auto v = r.number("tolerance")) q.tolerance = *v;
    if (q.tolerance < 0) r.ctx().error(r.where(), "tolerance must not be negative in " + r.name());
    if (auto u = r.string("unit")) q.unit = *u;
    q.source.equals = q.answer;
    q.source.tolerance = q.tolerance;
  } else if (kind == "choice") {
    q.kind = QuizKind::Choice;
    read_options(r, q);
    if (auto a = r.integer("answer", true)) {
      q.correct = static_cast<int>(*a);
      q.correct_where = where_of(*r.get("answer"));
      if (!q.options.empty() && (*a < 1 || *a > static_cast<int64_t>(q.options.size())))
        r.ctx().error(q.correct_where, "answer " + std::to_string(*a) +
                                           " is not an option number (1.." +
                                           std::to_string(q.options.size()) + ") in " + r.name());
    }
  } else if (kind) {
    r.ctx().error(where_of(*r.get("kind")),
                  "unknown quiz kind '" + *kind + "' in " + r.name() + " (valid: number, choice)");
  }
  r.finish();
  return q;
}

// [SECTION] Steps and the lesson ------------------------------------------------------------

constexpr int64_t kMaxLessonBytes = 4 << 20;  // the longest shipped lesson is about 13 KiB

// Ids name files (slides/<id>.png) and links: [a-z0-9-]{1,64}, nothing else ("sub/../x", a
// newline or 300 characters would escape the folder or break the slide index).
void check_id(Reader& r, const std::string& id, const char* what) {
  const bool ok = !id.empty() && id.size() <= 64 &&
                  std::all_of(id.begin(), id.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
  if (!ok)
    r.ctx().error(where_of(*r.get("id")), std::string(what) + " '" + one_line(id.substr(0, 80)) +
                                              (id.size() > 80 ? "..." : "") + "' in " + r.name() +
                                              " must be 1 to 64 of a-z, 0-9 and '-'");
}

LessonStep read_step(Reader& r) {
  LessonStep s;
  s.where = r.where();
  if (auto id = r.string("id", true)) {
    s.id = *id;
    check_id(r, *id, "step id");
  }
  s.title = r.text("title");
  s.text = r.text("text");
  s.short_text = r.text("short", false);
  if (auto p = r.string("panel")) {
    if (!is_panel_name(*p)) {
      std::vector<std::string> names(std::begin(kPanelNames), std::end(kPanelNames));
      r.ctx().error(where_of(*r.get("panel")),
                    "unknown panel '" + *p + "' in " + r.name() + " (known: " + join(names) + ")");
    }
    s.panel = *p;
  }
  if (auto t = r.string("trace")) {
    if (!is_step_name(*t)) {
      std::vector<std::string> names(kStepNames.begin(), kStepNames.end());
      r.ctx().error(where_of(*r.get("trace")), "unknown trace step '" + *t + "' in " + r.name() +
                                                   " (known: " + join(names) + ")");
    }
    s.trace_step = *t;
  }
  if (auto b = r.integer("batch")) s.batch = *b;
  s.head = r.integer("head");
  if (auto v = r.int_list("rows")) s.rows = *v;
  if (auto v = r.int_list("cols")) s.cols = *v;
  if (auto z = r.number("zoom")) s.zoom = *z;
  if (auto t = r.int_list("tile")) {
    if (t->size() != 2)
      r.ctx().error(where_of(*r.get("tile")), "tile must be [query block, key block] in " + r.name());
    s.tile = t;
  }
  if (auto a = r.string("action")) {
    std::vector<std::string> names(std::begin(kActionNames), std::end(kActionNames));
    if (std::find(names.begin(), names.end(), *a) == names.end())
      r.ctx().error(where_of(*r.get("action")),
                    "unknown action '" + *a + "' in " + r.name() + " (known: " + join(names) + ")");
    s.action = *a;
  }
  if (const toml::table* h = r.table("highlight")) {
    Reader hr(r.ctx(), *h, r.name() + ".highlight");
    s.highlight_where = hr.where();
    if (auto heads = hr.string("head")) {
      if (auto parsed = parse_head_names(*heads))
        s.highlight_heads = *parsed;
      else
        r.ctx().error(where_of(*hr.get("head")), "highlight.head '" + one_line(heads->substr(0, 40)) + "' in " +
                                                     r.name() + ": write layer.head (\"2.1\"), several with commas (\"2.1,0.3\")");
    }
    for (const char* key : {"token", "bar"})
      if (auto word = hr.string(key)) {
        if (word->empty() || word->size() > 64)
          r.ctx().error(where_of(*hr.get(key)), std::string("highlight.") + key + " in " + r.name() +
                                                    ": write one token's text (\"fish\"), 1 to 64 bytes");
        (std::string(key) == "token" ? s.highlight_token : s.highlight_bar) = *word;
      }
    if (h->empty())
      r.ctx().error(s.highlight_where, "empty highlight in " + r.name() + ": give head, token or bar");
    hr.finish();
  }
  if (auto q = r.string("sequence")) {
    if (q->empty()) r.ctx().error(where_of(*r.get("sequence")), "empty sequence in " + r.name());
    s.sequence = *q;
  }
  s.settings = read_settings_table(r, "scenario");
  s.claims = read_claims(r, "claim");
  if (const toml::table* t = r.table("task")) {
    Reader tr(r.ctx(), *t, r.name() + ".task");
    s.task = read_task(tr);
  }
  if (const toml::table* q = r.table("quiz")) {
    Reader qr(r.ctx(), *q, r.name() + ".quiz");
    s.quiz = read_quiz(qr);
  }
  r.finish();
  return s;
}

}  // namespace

std::optional<std::vector<HeadName>> parse_head_names(const std::string& text) {
  std::vector<HeadName> heads;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string one = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t dot = one.find('.');
    auto digits = [](const std::string& d) {
      return !d.empty() && d.size() <= 6 && d.find_first_not_of("0123456789") == std::string::npos;
    };
    if (dot == std::string::npos || !digits(one.substr(0, dot)) || !digits(one.substr(dot + 1))) return std::nullopt;
    heads.push_back(HeadName{std::stoll(one.substr(0, dot)), std::stoll(one.substr(dot + 1))});
    if (comma == std::string::npos) return heads;
    start = comma + 1;
  }
}

LoadResult load_lesson_text(const std::string& text, const std::string& path, Fill fill) {
  LoadResult result;
  Context ctx{path, &result.diagnostics, &text, {}};
  ctx.line_starts.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') ctx.line_starts.push_back(i + 1);
  toml::table root;
  // toml++ recurses per nesting level: the one bound every reader of outside text uses
  if (const auto at = too_deep(text, Syntax::Toml)) {
    const size_t line = static_cast<size_t>(std::upper_bound(ctx.line_starts.begin(), ctx.line_starts.end(), *at) -
                                            ctx.line_starts.begin());
    ctx.error(Where{static_cast<int>(line), static_cast<int>(*at - ctx.line_starts[line - 1] + 1)},
              "nested more than " + std::to_string(kMaxNesting) + " levels deep; no lesson needs that");
    return result;
  }
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    ctx.error(Where{static_cast<int>(b.line), static_cast<int>(b.column)},
              "TOML syntax error: " + std::string(e.description()));
    return result;
  }
  Lesson lesson;
  lesson.path = path;
  Reader r(ctx, root, "the lesson");
  if (auto f = r.integer("format", true); f && *f != 2)
    ctx.error(where_of(*r.get("format")),
              "unsupported format " + std::to_string(*f) +
                  " (this attnsim reads format 2: choice options carry their own claims and every "
                  "number in the text is marked; see lessons/FORMAT.md)");
  if (auto id = r.string("id", true)) {
    lesson.id = *id;
    check_id(r, *id, "lesson id");
  }
  if (auto o = r.integer("order", true)) lesson.order = *o;
  lesson.title = r.text("title");
  lesson.summary = r.text("summary");
  lesson.settings = read_settings_table(r, "scenario");
  if (!lesson.settings.preset && root.contains("scenario") && !root["scenario"]["preset"])
    ctx.error(where_of(*root.get("scenario")), "missing key 'preset' in the lesson.scenario");
  if (!root.contains("scenario")) ctx.error(Where{1, 1}, "missing key 'scenario' in the lesson");
  const toml::node* steps = r.get("step", true);
  if (steps) {
    const toml::array* a = steps->as_array();
    if (!a) {
      r.wrong_type(*steps, "step", "an array of tables ([[step]])");
    } else {
      std::set<std::string> ids;
      for (size_t i = 0; i < a->size(); ++i) {
        const toml::table* t = (*a)[i].as_table();
        if (!t) {
          r.wrong_type((*a)[i], "step", "a table");
          continue;
        }
        const auto id = t->get("id") ? t->get("id")->value<std::string>() : std::nullopt;
        Reader sr(ctx, *t, "step " + std::to_string(i + 1) + (id ? " (\"" + *id + "\")" : ""));
        LessonStep step = read_step(sr);
        if (!step.id.empty() && !ids.insert(step.id).second)
          ctx.error(step.where, "duplicate step id '" + step.id + "'");
        lesson.steps.push_back(std::move(step));
      }
      if (a->empty()) ctx.error(where_of(*steps), "a lesson needs at least one step");
    }
  }
  r.finish();
  if (result.diagnostics.empty()) {
    if (fill == Fill::Values)
      fill_values(lesson);
    else
      fill_pending(lesson);
    result.lesson = std::move(lesson);
  }
  return result;
}

LoadResult load_lesson(const std::string& path, Fill fill) {
  std::string text;
  try {
    text = read_text_file(path, kMaxLessonBytes);  // regular files only, size capped
  } catch (const Error& e) {
    LoadResult r;
    std::string why = e.what();
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);  // str() names the file
    r.diagnostics.push_back(Diagnostic{path, 0, 0, "cannot read the file: " + why});
    return r;
  }
  return load_lesson_text(text, path, fill);
}

}  // namespace attnsim::lessons
