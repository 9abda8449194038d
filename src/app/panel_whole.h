// The whole pass's tabs of the model panels (panel_model.cpp for the toy model, panel_hf.cpp
// for a Hugging Face one): the live sampling chart, and the logit lens beside the direct logit
// attribution grid. Each panel hands over its view's parts; the tabs know no model family.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <imgui.h>

#include "app/app.h"
#include "model/heads.h"
#include "views/sampling_figure.h"
#include "views/whole_run.h"

namespace attnsim::app {

// What a model panel's view gives the tabs.
struct WholePanel {
  SamplingView* sampling = nullptr;
  const WholeRun* whole = nullptr;
  int64_t layers = 0, heads = 0;
  TokenLabel label;                                  // a token as the panel shows it
  std::function<bool(model::HeadRef)> is_ablated;
  std::function<void(model::HeadRef)> toggle;        // knock a head out or back in (throws Error)
  std::function<void(int32_t)> set_dla_token;        // throws Error
};

// The sampling chart's figure, rebuilt only when its key changes (kept by the panel's state).
struct WholeTabsState {
  std::string key;
  figure::Figure chart;
  int dla_pick = 0;  // the token id box
};

// Temperature, top-k, top-p and seed over the chart: a change calls SamplingView::set_options
// (only the sampling steps) and the chart shows it in the same frame.
void sampling_tab(App& app, const WholePanel& p, WholeTabsState& s);
// Per layer the lens's top token and the final answer's probability; the DLA grid (layers x
// heads, a click knocks the head out as the head grid does) and the direct paths.
void lens_tab(App& app, const WholePanel& p, WholeTabsState& s);

}  // namespace attnsim::app
