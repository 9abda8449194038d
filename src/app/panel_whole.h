// The whole pass's tabs of the model panels (panel_model.cpp for the toy model, panel_hf.cpp
// for a Hugging Face one): the live sampling chart, and the logit lens beside the direct logit
// attribution grid. Each panel hands over its view's parts; the tabs know no model family.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <imgui.h>

#include "app/app.h"
#include "model/training/heads.h"
#include "views/overview_figure.h"
#include "views/sampling_figure.h"
#include "views/whole_run.h"

namespace attnsim::app {

// What a model panel's view gives the tabs.
struct WholePanel {
  SamplingView* sampling = nullptr;
  const WholeRun* whole = nullptr;
  uint64_t revision = 0;                             // the view's: changes whenever `whole` may have
  int64_t layers = 0, heads = 0;
  TokenLabel label;                                  // a token as the panel shows it
  std::function<bool(model::HeadRef)> is_ablated;
  std::function<void(model::HeadRef)> toggle;        // knock a head out or back in (throws Error)
  std::function<void(int32_t)> set_dla_token;        // throws Error
  bool mlp = false;                                  // the blocks have an MLP (the overview draws it)
  int64_t shown_layer = 0;                           // the block the pipeline, tensor and memory views show
  std::function<void(int64_t)> open_block;           // show block l's steps in those views (throws Error)
};

// The tabs' figures, rebuilt only when their key changes (kept by the panel's state).
struct WholeTabsState {
  std::string key, overview_key;
  figure::Figure chart, overview;
  OverviewLayout overview_layout;
  int64_t expanded = -1;  // the overview's open block (-1: none)
  char dla_word[256] = {};  // the attribution's "another token" box
  int32_t marked_bar = -1;  // the sampling chart's bar a lesson step names (-1: none)
};

// Temperature, top-k, top-p and seed over the chart: a change calls SamplingView::set_options
// (only the sampling steps) and the chart shows it in the same frame.
void sampling_tab(App& app, const WholePanel& p, WholeTabsState& s);
// The whole model (views/overview_figure.h); a click on a block opens it in place (its steps
// listed, the others closed) and shows it in the pipeline, tensor and memory views; a click
// on one of its steps selects that step there.
void overview_tab(App& app, const WholePanel& p, WholeTabsState& s);
// Per layer the lens's top token and the final answer's probability; the DLA grid (layers x
// heads, a click knocks the head out as the head grid does) and the direct paths.
void lens_tab(App& app, const WholePanel& p, WholeTabsState& s);

}  // namespace attnsim::app
