// The bug lab panel's figure. See buglab_view.h.
#include "views/buglab_view.h"

#include "views/slide_scenes.h"
#include "engine/error.h"
#include "figure/palette.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

BuglabView buglab_view(const BuglabViewSpec& s) {
  if (!s.run) throw Error("the bug lab view needs a run");
  const Step* step = s.run->run.trace.find(s.step);
  if (!step) throw Error("unknown step '" + s.step + "'");
  const fig::Theme& th = fig::theme_by_name(s.theme);
  BuglabView v;
  v.figure.width = s.width;
  v.figure.height = s.height;
  v.figure.background = th.background;
  v.figure.theme = th.name;
  v.figure.title = s.step;
  v.blocks = buglab_blocks(*s.run, s.step, s.batch, s.head, s.lang);
  if (v.blocks.empty()) return v;
  for (float d : v.blocks.back().values) v.differing += d != 0;  // NaN counts: it differs
  const float pad = 12;
  v.layout = fig::add_blocks(v.figure, th, {pad, 0, s.width - 2 * pad, s.height - pad}, v.blocks,
                             step_axis_labels(*s.run, s.step, step->out, s.batch, s.lang));
  return v;
}

}  // namespace attnsim::app
