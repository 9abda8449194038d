// Heat view specs for trace steps. See step_view.h.
#include "app/step_view.h"

#include "views/slide_scenes.h"

namespace attnsim::app {

const std::vector<std::string>* row_tokens(const App& app, const std::string& step) {
  const RunData* d = app.data();
  if (!d || app.batch >= static_cast<int64_t>(d->q_tokens.size())) return nullptr;
  const bool keys = step == "key" || step == "value" || step.rfind("k_", 0) == 0 ||
                    step.rfind("v_", 0) == 0;
  return keys ? &d->k_tokens[static_cast<size_t>(app.batch)]
              : &d->q_tokens[static_cast<size_t>(app.batch)];
}

HeatViewSpec step_view_spec(App& app, int run, const Step& step, bool animate) {
  HeatViewSpec s;
  const RunData* d = app.data();
  if (!d || !step.out.defined()) return s;
  const uint64_t gen = d->generation;
  const Trace& trace = run == 0 ? d->run.trace : d->reference.trace;
  s.to = &app.displays.get(gen, run, step, app.batch, layout_for_step(step.name));
  s.row_labels = row_tokens(app, step.name);
  if (layout_for_step(step.name) == LayoutKind::HeadGrid &&
      app.batch < static_cast<int64_t>(d->k_tokens.size()))
    s.col_labels = &d->k_tokens[static_cast<size_t>(app.batch)];
  s.row_sums = step.name == "alpha" || step.name == "alpha_dropped";
  s.per_head_scale = app.per_head_scale;
  if (s.to->layout.kind == LayoutKind::Matrix && columns_are_heads(*d, step)) s.heads = d->config.heads;

  // Transition: only when stepping forward by one active step, from the step's first input.
  const Playback& p = app.playback;
  if (!animate || !p.animating() || step.inputs.empty()) return s;
  if (next_step(app.active_steps(), p.from) != p.step) return s;
  const Step* src = trace.find(step.inputs[0]);
  s.kind = transition_kind(src, step);
  s.t = p.t;
  if (s.kind == TransitionKind::Appear || !src || !src->out.defined()) return s;
  s.from = &app.displays.get(gen, run, *src, app.batch, layout_for_step(src->name));
  if (s.kind == TransitionKind::Rearrange || s.kind == TransitionKind::Copy)
    s.segments = &app.displays.segments(*s.from, *s.to, s.kind == TransitionKind::Rearrange);
  s.by_column = step.op.rfind("linear", 0) == 0;  // each output column reads every input feature
  return s;
}

}  // namespace attnsim::app
