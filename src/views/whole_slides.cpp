// The whole pass's slides. See whole_slides.h.
#include "views/whole_slides.h"

#include "views/hf_view.h"
#include "views/model_view.h"
#include "views/overview_figure.h"
#include "views/sampling_figure.h"

namespace attnsim::app {

namespace {

// What both model families give the two slides.
struct Shown {
  const WholeRun* run = nullptr;
  SamplingView* sampling = nullptr;
  TokenLabel label;
  std::vector<int32_t> tokens;
  bool mlp = false;
};

figure::Figure draw(const Options& o, Lang lang, const Shown& s) {
  model::SamplingOptions so;
  so.temperature = o.temperature;
  so.top_k = o.top_k;
  so.top_p = o.top_p;
  so.seed = static_cast<uint64_t>(o.seed < 0 ? 0 : o.seed);
  if (o.panel == "sampling") {
    s.sampling->set_options(so);
    return sampling_slide(s.sampling->chart(), s.label, tr_in(lang, "next-token probabilities"), lang, o.theme);
  }
  OverviewInput in;
  in.run = s.run;
  for (int32_t t : s.tokens) in.tokens.push_back(s.label(t));
  in.answer = s.label(s.run->lens.rows.back().top);
  in.mlp = s.mlp;
  return overview_slide(in, tr_in(lang, "the whole model"), lang, o.theme);
}

}  // namespace

figure::Figure whole_slide(const Options& o, Lang lang) {
  if (is_hf_folder(o.model)) {
    const auto view = open_hf_view(o.model, o.text, o.layer, o.ablate);
    Shown s{view->run()->whole.get(), &view->sampling(), [&](int32_t id) { return view->text_tools().label(id); },
            view->token_ids(), true};
    return draw(o, lang, s);
  }
  ModelView view;
  view.load(o.model.empty() ? default_model_dir() : o.model);
  if (!o.text.empty()) view.set_text(o.text);
  Shown s{&view.whole(), &view.sampling(), view.labeller(), view.tokens(),
          view.model().config.mlp};
  return draw(o, lang, s);
}

}  // namespace attnsim::app
