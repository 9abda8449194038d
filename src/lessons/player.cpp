// The lesson player's logic. See player.h.
#include "lessons/player.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "engine/bugs.h"
#include "engine/mask.h"

namespace attnsim::lessons {

Settings settings_of(const LiveState& live) {
  Settings s;
  s.preset = live.preset.empty() ? "default" : live.preset;
  const MhaConfig& c = live.config;
  s.batch = c.batch;
  s.tq = c.tq;
  s.tk = c.tk;
  s.d_model = c.d_model;
  s.heads = c.heads;
  s.seed = static_cast<int64_t>(c.seed);
  s.bias = c.bias;
  s.wo_identity = c.wo_identity;
  s.train = c.train;
  s.cross = !c.self_attention;
  s.dropout = c.dropout;
  s.input_scale = live.input_scale;
  s.mask = c.mask.empty() ? std::string("none") : format_mask_spec(c.mask);
  s.bug = bug_name(c.bug);
  s.sentences = live.sentences;
  s.key_sentences = live.key_sentences;
  return s;
}

int64_t head_count(const std::string& ablated) {
  int64_t n = 0;
  bool in_item = false;
  for (char c : ablated) {
    if (c == ',') in_item = false;
    else if (c != ' ' && !in_item) in_item = true, ++n;
  }
  return n;
}

Claim live_claim(const Task& task, const Claim& claim, const LiveState& live) {
  Claim c = claim;
  if (task.model_goal && c.quantity.rfind("model.", 0) == 0) c.model.ablate = live.ablated;
  return c;
}

bool goal_reached(const Task& task, const LiveState& live, std::string* why, GoalGap* gap) {
  const Settings& g = task.goal;
  const MhaConfig& c = live.config;
  auto differ = [&](const std::string& name, const std::string& want, const std::string& have) {
    if (why) *why = name + " is " + have + ", the task asks for " + want;
    if (gap) *gap = GoalGap{name, want, have};
    return false;
  };
  auto num = [](auto v) { return std::to_string(v); };
  if (task.model_goal) {
    if (!live.model) return differ("the model panel", "open", "closed");
    if (live.mean_ablation) return differ("the ablation", "zero", "mean");
    if (live.knocked_out != task.model_goal->knock_out)
      return differ("heads knocked out", num(task.model_goal->knock_out), num(live.knocked_out));
  }
  if (g.batch && *g.batch != c.batch) return differ("batch", num(*g.batch), num(c.batch));
  if (g.tq && *g.tq != c.tq) return differ("Tq", num(*g.tq), num(c.tq));
  if (g.tk && *g.tk != c.tk) return differ("Tk", num(*g.tk), num(c.tk));
  if (g.d_model && *g.d_model != c.d_model) return differ("d_model", num(*g.d_model), num(c.d_model));
  if (g.heads && *g.heads != c.heads) return differ("heads", num(*g.heads), num(c.heads));
  if (g.seed && static_cast<uint64_t>(*g.seed) != c.seed) return differ("seed", num(*g.seed), num(c.seed));
  if (g.bias && *g.bias != c.bias) return differ("bias", *g.bias ? "on" : "off", c.bias ? "on" : "off");
  if (g.wo_identity && *g.wo_identity != c.wo_identity)
    return differ("W_O = identity", *g.wo_identity ? "on" : "off", c.wo_identity ? "on" : "off");
  if (g.train && *g.train != c.train) return differ("train mode", *g.train ? "on" : "off", c.train ? "on" : "off");
  if (g.cross && *g.cross == c.self_attention)
    return differ("cross-attention", *g.cross ? "on" : "off", c.self_attention ? "off" : "on");
  if (g.mask) {
    const MaskSpec want = parse_mask_spec(*g.mask == "none" ? "" : *g.mask);
    if (format_mask_spec(want) != format_mask_spec(c.mask))
      return differ("the mask", format_mask_spec(want), format_mask_spec(c.mask));
  }
  if (g.bug) {
    const Bug want = *g.bug == "none" ? Bug::None : parse_bug(*g.bug);
    if (want != c.bug) return differ("the bug mode", bug_name(want), bug_name(c.bug));
  }
  if (task.goal_step && *task.goal_step != live.trace_step)
    return differ("the step on screen", *task.goal_step, live.trace_step);
  return true;
}

std::optional<double> parse_answer(const std::string& text) {
  std::string digits, unit;
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  for (; i < text.size(); ++i) {
    const char ch = text[i];
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '+') {
      digits += ch;
    } else if ((ch == 'e' || ch == 'E') && !digits.empty() && i + 1 < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' || text[i + 1] == '+')) {
      digits += ch;
    } else if (ch == ',' || ch == '_' || ch == ' ' || ch == '\'') {
      continue;
    } else {
      break;
    }
  }
  for (; i < text.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(text[i]))) unit += text[i];
  if (digits.empty()) return std::nullopt;
  double v;
  try {
    size_t used = 0;
    v = std::stod(digits, &used);
    if (used != digits.size()) return std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
  static const std::pair<const char*, double> units[] = {
      {"", 1}, {"B", 1}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9},
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  for (const auto& [name, factor] : units)
    if (unit == name) return v * factor;
  return std::nullopt;
}

QuizResult check_number(const Quiz& quiz, const std::string& typed) {
  QuizResult r;
  const auto v = parse_answer(typed);
  if (!v) {
    r.readable = false;
    return r;
  }
  const double tol = std::max(quiz.tolerance, 1e-9) * std::max(std::fabs(quiz.answer), 1e-30);
  r.right = std::fabs(*v - quiz.answer) <= tol;
  return r;
}

QuizResult check_choice(const Quiz& quiz, int picked) {
  QuizResult r;
  r.readable = picked >= 1 && picked <= static_cast<int>(quiz.options.size());
  r.right = r.readable && picked == quiz.correct;
  return r;
}

void Player::open(const Lesson& lesson, int step) {
  lesson_ = lesson;
  go(step);
}

void Player::go(int step) {
  if (!lesson_) return;
  step_ = std::clamp(step, 0, std::max(0, step_count() - 1));
}

bool Player::next() {
  if (!lesson_ || step_ + 1 >= step_count()) return false;
  ++step_;
  return true;
}

bool Player::previous() {
  if (!lesson_ || step_ == 0) return false;
  --step_;
  return true;
}

Resolved Player::state() const { return resolve(lesson_->settings_at(static_cast<size_t>(step_))); }

void Player::record(Progress& progress) const {
  if (!lesson_) return;
  LessonProgress& p = progress.lessons[lesson_->id];
  p.step = step_;
  p.seen.insert(step().id);
  progress.last_lesson = lesson_->id;
}

}  // namespace attnsim::lessons
