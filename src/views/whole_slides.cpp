// The whole pass's slides. See whole_slides.h.
#include "views/whole_slides.h"

#include <algorithm>
#include <cmath>

#include "views/hf_view.h"
#include "views/lens_figure.h"
#include "views/model_view.h"
#include "views/overview_figure.h"
#include "views/sampling_figure.h"
#include "views/slide_scenes.h"

namespace attnsim::app {

namespace {

// What both model families give the two slides.
struct Shown {
  const WholeRun* run = nullptr;
  SamplingView* sampling = nullptr;
  TokenLabel label;
  std::vector<int32_t> tokens;
  bool mlp = false;
  int64_t heads = 0;
};

model::SamplingOptions sampling_of(const Options& o) {
  model::SamplingOptions so;
  so.temperature = o.temperature;
  so.top_k = o.top_k;
  so.top_p = o.top_p;
  so.seed = static_cast<uint64_t>(o.seed < 0 ? 0 : o.seed);
  return so;
}

figure::Figure sampling_frame(const Options& o, Lang lang, const Shown& s, const model::SamplingOptions& so) {
  s.sampling->set_options(so);
  return sampling_slide(s.sampling->chart(), s.label, tr_in(lang, "next-token probabilities"), lang, o.theme);
}

figure::Figure overview_frame(const Options& o, Lang lang, const Shown& s, int64_t reveal) {
  OverviewInput in;
  in.run = s.run;
  for (int32_t t : s.tokens) in.tokens.push_back(s.label(t));
  in.answer = s.label(s.run->lens.rows.back().top);
  in.mlp = s.mlp;
  in.reveal = reveal;
  return overview_slide(in, tr_in(lang, "the whole model"), lang, o.theme);
}

figure::Figure draw(const Options& o, Lang lang, const Shown& s) {
  if (o.panel == "lens") return lens_slide(*s.run, s.heads, s.label, lang, o.theme);
  return o.panel == "sampling" ? sampling_frame(o, lang, s, sampling_of(o)) : overview_frame(o, lang, s, -1);
}

Animation animate(const Options& o, Lang lang, const Shown& s) {
  Animation a;
  const int n = std::max(2, static_cast<int>(std::lround(o.fps * o.seconds)));
  const int delay = std::max(2, static_cast<int>(std::lround(100.0 / std::max(1, o.fps))));  // centiseconds
  if (o.panel == "sampling") {
    model::SamplingOptions so = sampling_of(o);
    for (int k = 0; k < n; ++k) {
      so.temperature = static_cast<float>(0.25 * std::pow(8.0, static_cast<double>(k) / (n - 1)));
      a.frames.push_back(sampling_frame(o, lang, s, so));
      a.delay_cs.push_back(delay);
    }
    return a;
  }
  const int64_t stages = s.run->layers() + 2;  // embed, the blocks, the logits
  for (int64_t stage = 0; stage < stages; ++stage) {
    const int hold = std::max(1, n / static_cast<int>(stages)) * (stage + 1 == stages ? 3 : 1);  // the end stays
    a.frames.push_back(overview_frame(o, lang, s, stage));
    a.delay_cs.push_back(delay * hold);
  }
  return a;
}

// Runs `f` on the folder's model: a Hugging Face folder or an attnsim checkpoint.
template <class F>
auto with_shown(const Options& o, F&& f) {
  if (is_hf_folder(o.model)) {
    const auto view = open_hf_view(o.model, o.text, o.layer, o.ablate);
    Shown s{view->run()->whole.get(), &view->sampling(), [&](int32_t id) { return view->text_tools().label(id); },
            view->token_ids(), true, view->config().heads};
    return f(s);
  }
  ModelView view;
  view.load(scenario_model_dir(o.model));  // the window's model unless --model names one
  if (!o.text.empty()) view.set_text(o.text);
  Shown s{&view.whole(), &view.sampling(), view.labeller(), view.tokens(), view.model().config.mlp,
          view.model().config.heads};
  return f(s);
}

}  // namespace

Animation whole_animation(const Options& o, Lang lang) {
  return with_shown(o, [&](const Shown& s) { return animate(o, lang, s); });
}

figure::Figure whole_slide(const Options& o, Lang lang) {
  return with_shown(o, [&](const Shown& s) { return draw(o, lang, s); });
}

}  // namespace attnsim::app
