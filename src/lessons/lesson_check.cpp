// check_lesson: runs the engine on every state a lesson shows and on every figure it states.
#include <cmath>

#include "engine/error.h"
#include "engine/scenario.h"
#include "engine/trace.h"
#include "lessons/lesson.h"
#include "lessons/quantity.h"

namespace attnsim::lessons {

namespace {

std::string step_label(const Lesson& l, size_t i) {
  return "step " + std::to_string(i + 1) + " (\"" + l.steps[i].id + "\")";
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
      for (const Claim& c : s.task->claims) check_claim(c, goal, label + " task claim");
    }
    if (s.quiz) {
      const Quiz& q = *s.quiz;
      if (q.kind == QuizKind::Number) {
        std::string why;
        if (!eval.holds(q.source, base, &why))
          report(q.source.where, label + " quiz answer " + format_value(q.answer) +
                                     " disagrees with the engine (" + q.source.quantity + "): " + why);
      } else {
        for (const Claim& c : q.verify) check_claim(c, base, label + " quiz verify");
      }
    }
  }
}

}  // namespace attnsim::lessons
