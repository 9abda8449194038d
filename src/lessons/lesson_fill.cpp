// fill_values: every {value:...} of a lesson's texts becomes the engine's figure when the
// lesson loads, so the text cannot drift from the engine. See prose.h for the marks.
#include <atomic>
#include <map>

#include "engine/error.h"
#include "lessons/lesson.h"
#include "lessons/prose.h"
#include "lessons/quantity.h"
#include "lessons/value_fill.h"

namespace attnsim::lessons {

Where Text::Source::where(size_t offset) const {
  if (at.empty()) return Where{};
  return at[std::min(offset, at.size() - 1)];
}

namespace {

struct Stopped {};  // ValueFill::next was asked to stop

struct Named {
  const Claim* claim;
  Settings base;  // the settings of the step (or the task's goal) that owns it
};

// Every claim with an id, wherever it stands.
std::map<std::string, Named> named_claims(const Lesson& l, std::vector<Diagnostic>& problems) {
  std::map<std::string, Named> named;
  auto add = [&](const Claim& c, const Settings& base) {
    if (c.id.empty()) return;
    if (!named.emplace(c.id, Named{&c, base}).second)
      problems.push_back(Diagnostic{l.path, c.where.line, c.where.column,
                                    "duplicate claim id '" + c.id + "' (ids are unique in a lesson)"});
  };
  for (size_t i = 0; i < l.steps.size(); ++i) {
    const LessonStep& s = l.steps[i];
    const Settings base = l.settings_at(i);
    for (const Claim& c : s.claims) add(c, base);
    if (s.task)
      for (const Claim& c : s.task->claims) add(c, merge(base, s.task->goal));
    if (s.quiz) {
      add(s.quiz->source, base);
      for (const auto& o : s.quiz->options)
        for (const Claim& c : o.claims) add(c, base);
    }
  }
  return named;
}

// The figure of one {value:NAME|FMT}; throws Error with what is wrong.
std::string fill_one(const std::string& body, const Settings& base,
                     const std::map<std::string, Named>& named, Evaluator& eval) {
  const ValueRef ref = parse_value_ref(body);
  std::string why;
  if (!is_known_format(ref.format, &why)) throw Error(why);
  // QUANTITY@ID: a quantity under claim ID's tables (the sizes a cost claim used, ...).
  if (const size_t at = ref.name.find('@'); at != std::string::npos) {
    const std::string q = ref.name.substr(0, at), id = ref.name.substr(at + 1);
    const auto it = named.find(id);
    if (it == named.end()) throw Error("no claim has the id '" + id + "'");
    if (!is_known_quantity(q, &why)) throw Error(why);
    Claim c = *it->second.claim;
    c.quantity = q;
    return format_for_prose(eval.evaluate(c, it->second.base), ref.format);
  }
  if (ref.name.find('.') == std::string::npos) {
    const auto it = named.find(ref.name);
    if (it == named.end())
      throw Error("no claim has the id '" + ref.name + "' (a quantity has dots: trace.alpha.shape)");
    return format_for_prose(eval.evaluate(*it->second.claim, it->second.base), ref.format);
  }
  if (!is_known_quantity(ref.name, &why)) throw Error(why);
  if (quantity_uses_cost(ref.name) || quantity_uses_flash(ref.name) ||
      quantity_uses_against(ref.name) || ref.name.rfind("ablate.", 0) == 0 ||
      ref.name.rfind("pair.", 0) == 0)
    throw Error("'" + ref.name + "' needs its own sizes or a second run: give a [[step.claim]] "
                "those tables and an id, and write {value:ID}");
  Claim c;
  c.quantity = ref.name;
  return format_for_prose(eval.evaluate(c, base), ref.format);
}

void fill_language(const TextRef& ref, Text::Source& src, std::string& shown,
                   std::vector<std::string>& values, const char* lang,
                   const std::map<std::string, Named>& named, Evaluator& eval,
                   const std::string& path, std::vector<Diagnostic>& problems,
                   const std::atomic<bool>* stop = nullptr) {
  if (src.text.empty()) src.text = shown;  // built in code, not read from a file
  auto problem = [&](size_t offset, const std::string& message) {
    const Where w = src.where(offset);
    problems.push_back(Diagnostic{path, w.line, w.column, ref.label + "." + lang + ": " + message});
  };
  std::vector<std::pair<size_t, std::string>> mark_problems;
  const std::vector<Mark> marks = find_marks(src.text, &mark_problems);
  for (const auto& [offset, message] : mark_problems) problem(offset, message);
  // Korean: the particle after a figure must fit its final sound (prose.h), whether the
  // figure is the engine's, a formula's constant or a quoted one ("{quote:512}은" reads 오백십이은).
  // Only a value's pair is filled (fill_marks): the others are written as they read.
  auto check_particle = [&](const Mark& m, const std::string& figure, const std::string& mark) {
    if (std::string(lang) != "ko" || figure == "?") return;
    std::string written;
    const bool pair = particle_pair_at(src.text, m.end).length > 0;
    if (pair && m.kind != Mark::Kind::Value)
      problem(m.end, "a particle pair after " + mark + " is not filled: write the particle itself");
    else if (pair && korean_final_sound(figure) == FinalSound::Unknown)
      problem(m.end, "cannot tell the final sound of '" + figure + "' for the particle after " + mark +
                         ": write the particle itself");
    else if (const std::string copula = bare_copula_at(src.text, m.end);
             !copula.empty() && korean_final_sound(figure) != FinalSound::Vowel)
      // 16다 reads 십육다: after a consonant (or a sound unknown) the copula keeps its 이
      problem(m.end, "'" + figure + "' takes 이" + (copula == "다" ? "다" : "었") + ", not " + copula +
                         ": write " + mark + (copula == "다" ? "이다" : "이었") + " (right after any figure)");
    else if (const std::string right = wrong_particle(src.text, m.end, figure, &written); !right.empty())
      problem(m.end, "'" + figure + "' takes " + right + ", not " + written + ": write " + mark + right +
                         " or the pair (" + (right == "는" || right == "은" ? "은/는" :
                                             right == "가" || right == "이" ? "이/가" :
                                             right == "를" || right == "을" ? "을/를" :
                                             right == "와" || right == "과" ? "와/과" : "으로/로") +
                         ") so the fill picks it");
  };
  std::vector<std::string> filled;
  values.clear();
  for (const Mark& m : marks) {
    if (m.kind == Mark::Kind::Value) {
      if (stop && *stop) throw Stopped{};  // a value can take seconds: see a stop before each
      std::string figure = "?";
      try {
        figure = fill_one(m.body, ref.base, named, eval);
      } catch (const Error& e) {
        problem(m.begin, "cannot fill {value:" + m.body + "}: " + e.what());
      }
      filled.push_back(figure);
      values.push_back(figure);
      check_particle(m, figure, "{value:" + m.body + "}");
    } else if (m.kind == Mark::Kind::Math) {
      if (m.body.size() != 1 || m.body[0] < '2' || m.body[0] > '9')
        problem(m.begin, "{math:" + m.body + "} must be one digit from 2 to 9 (a formula's "
                         "constant); an engine figure is {value:...}, a quoted one {quote:...}");
      values.push_back(m.body);
      check_particle(m, m.body, "{math:" + m.body + "}");
    } else {
      if (m.body.empty()) problem(m.begin, "empty {quote:}");
      values.push_back(m.body);
      if (!m.body.empty()) check_particle(m, m.body, "{quote:" + m.body + "}");
    }
  }
  shown = fill_marks(src.text, marks, filled);
}

// Both languages of one text.
void fill_text(const TextRef& ref, const std::map<std::string, Named>& named, Evaluator& eval,
               const std::string& path, std::vector<Diagnostic>& problems, const std::atomic<bool>* stop = nullptr) {
  Text& t = *ref.text;
  fill_language(ref, t.ko_src, t.ko, t.ko_values, "ko", named, eval, path, problems, stop);
  fill_language(ref, t.en_src, t.en, t.en_values, "en", named, eval, path, problems, stop);
}

// One language with every value showing kPendingFigure.
void pend_language(Text::Source& src, std::string& shown) {
  if (src.text.empty()) src.text = shown;
  const std::vector<Mark> marks = find_marks(src.text);
  std::vector<std::string> filled;
  for (const Mark& m : marks)
    if (m.kind == Mark::Kind::Value) filled.push_back(kPendingFigure);
  shown = fill_marks(src.text, marks, filled);
}

}  // namespace

void fill_values(Lesson& lesson) {
  lesson.fill_problems.clear();
  const auto named = named_claims(lesson, lesson.fill_problems);
  Evaluator eval;
  for (const TextRef& ref : lesson_texts(lesson)) fill_text(ref, named, eval, lesson.path, lesson.fill_problems);
}

void fill_pending(Lesson& lesson) {
  lesson.fill_problems.clear();
  const auto named = named_claims(lesson, lesson.fill_problems);
  Evaluator eval;
  for (const TextRef& ref : lesson_texts(lesson)) {
    if (ref.step < 0) {  // the title and summary: what a list of lessons shows
      fill_text(ref, named, eval, lesson.path, lesson.fill_problems);
      continue;
    }
    pend_language(ref.text->ko_src, ref.text->ko);
    pend_language(ref.text->en_src, ref.text->en);
  }
}

// [SECTION] One text at a time (value_fill.h)

std::vector<int> text_steps(Lesson& lesson) {
  std::vector<int> steps;
  for (const TextRef& ref : lesson_texts(lesson)) steps.push_back(ref.step);
  return steps;
}

struct ValueFill::State {
  Lesson lesson;  // the copy the texts are filled on (refs point into it)
  std::vector<TextRef> refs;
  std::vector<bool> done;
  std::map<std::string, Named> named;
  Evaluator eval;
  std::vector<Diagnostic> problems;
};

ValueFill::ValueFill(const Lesson& lesson) : s_(std::make_unique<State>()) {
  s_->lesson = lesson;
  s_->refs = lesson_texts(s_->lesson);
  s_->done.assign(s_->refs.size(), false);
  s_->named = named_claims(s_->lesson, s_->problems);
}

ValueFill::~ValueFill() = default;

std::optional<FilledText> ValueFill::next(int want, const std::atomic<bool>* stop) {
  const size_t n = s_->refs.size();
  // The wanted step's texts, then the texts after them in file order, wrapping round.
  size_t start = 0;
  for (size_t i = 0; i < n; ++i)
    if (s_->refs[i].step == want) {
      start = i;
      break;
    }
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (start + k) % n;
    if (s_->done[i]) continue;
    const TextRef& ref = s_->refs[i];
    try {
      fill_text(ref, s_->named, s_->eval, s_->lesson.path, s_->problems, stop);
    } catch (const Stopped&) {
      return std::nullopt;
    }
    s_->done[i] = true;
    return FilledText{i, ref.step, *ref.text};
  }
  return std::nullopt;
}

const std::vector<Diagnostic>& ValueFill::problems() const { return s_->problems; }

void put_filled(Lesson& lesson, const FilledText& filled) {
  const std::vector<TextRef> refs = lesson_texts(lesson);
  if (filled.index < refs.size()) *refs[filled.index].text = filled.text;
}

}  // namespace attnsim::lessons
