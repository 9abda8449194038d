// Animations as figures. See gif_scenes.h.
#include "views/gif_scenes.h"

#include <algorithm>
#include <cmath>

#include "views/layout.h"
#include "views/slide_scenes.h"
#include "views/transition.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "figure/palette.h"
#include "figure/slide.h"
#include "figure/tensor_figure.h"
#include "figure/text_metrics.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

std::vector<std::string> animation_path(const RunData& run, const std::string& from, const std::string& to) {
  const Trace& trace = run.run.trace;
  auto index = [&](const std::string& name, const char* flag) {
    for (size_t i = 0; i < trace.steps.size(); ++i)
      if (trace.steps[i].name == name) {
        if (trace.steps[i].skipped()) throw Error(std::string(flag) + " " + name + " is skipped in this scenario");
        return static_cast<int>(i);
      }
    throw Error(std::string(flag) + ": unknown or unreached step '" + name + "'");
  };
  const int a = index(from, "--from"), b = index(to, "--to");
  if (a >= b) throw Error("--from " + from + " must come before --to " + to + " in the trace");
  // Follow the data back from `to` through each step's first input (q_heads <- q_view <-
  // q_proj), so the animation shows one tensor changing, not its neighbours in the list.
  std::vector<std::string> back{to};
  while (back.back() != from) {
    const Step& s = trace.at(back.back());
    if (s.inputs.empty() || !trace.find(s.inputs.front()))
      throw Error("--to " + to + " is not computed from --from " + from);
    back.push_back(s.inputs.front());
  }
  std::vector<std::string> path;
  for (auto it = back.rbegin(); it != back.rend(); ++it)
    if (!trace.at(*it).skipped()) path.push_back(*it);
  return path;
}

int frames_per_move(int moves, int fps, float seconds) {
  return std::max(2, static_cast<int>(std::lround(static_cast<double>(fps) * seconds / std::max(1, moves))));
}

int animation_frame_count(int moves, int fps, float seconds, bool reduced_motion) {
  return reduced_motion ? 3 : frames_per_move(moves, fps, seconds) * moves;
}

AnimationCost animation_cost(const RunData& run, const AnimationSpec& spec) {
  const auto path = animation_path(run, spec.from, spec.to);
  int64_t cells = 0;
  for (const auto& name : path) {
    const Tensor& t = run.run.trace.at(name).out;
    cells = std::max(cells, t.numel() / std::max<int64_t>(1, t.shape()[0]));
  }
  AnimationCost c;
  c.frames = animation_frame_count(static_cast<int>(path.size()) - 1, spec.fps, spec.seconds, spec.reduced_motion);
  // + the slide's own items (title, caption, legend, labels): a few hundred
  c.figure_bytes = (Size(c.frames) * Size(cells + 512) * Size(sizeof(fig::Item))).value();
  return c;
}

namespace {

// One step's cells: its layout, its values in atlas order, its colour map, the tokens down
// its blocks' rows and its legend (the slide's row labels and legend).
struct State {
  const Step* step = nullptr;
  Layout layout;
  std::vector<float> atlas;
  fig::ColorMapId map = fig::ColorMapId::Diverging;
  float lo = -1, hi = 1;
  std::vector<std::string> rows;
  fig::Legend legend;
};

State state_of(const RunData& run, const Step& s, int64_t batch, lessons::Lang lang) {
  State st;
  st.step = &s;
  st.layout = make_layout(layout_for_step(s.name), s.out, batch);
  st.atlas = atlas_values(st.layout, s.out);
  st.rows = step_axis_labels(run, s.name, s.out, batch, lang).rows;
  // The colour range and legend the slide of this step uses (tensor_figure.h).
  std::vector<fig::Block> blocks = fig::tensor_blocks(s.name, s.out, batch);
  if (!blocks.empty()) st.map = blocks.front().map, st.lo = blocks.front().lo, st.hi = blocks.front().hi;
  st.legend = legend_in_lang(fig::legend_for(blocks, s.name + " · " + fig::colormap_name(st.map)), lang);
  return st;
}

fig::Color value_color(const State& st, float v, const fig::Theme& th) {
  const fig::Mark m = fig::mark_of(v);
  if (m != fig::Mark::None) return fig::mark_fill(th, m);
  return fig::colormap(st.map, st.hi > st.lo ? (v - st.lo) / (st.hi - st.lo) : 0.5f);
}

// Layout units -> figure units inside `area`, keeping cells square, centred.
struct Frame {
  float s = 1, x0 = 0, y0 = 0;
  fig::Rect map(const Rect& r) const { return {x0 + r.x * s, y0 + r.y * s, r.w * s, r.h * s}; }
};
Frame frame_for(const fig::Rect& area, float w, float h) {
  Frame f;
  f.s = std::min(area.w / std::max(w, 1.0f), area.h / std::max(h, 1.0f));
  f.x0 = area.x + (area.w - w * f.s) / 2;
  f.y0 = area.y + (area.h - h * f.s) / 2;
  return f;
}

// One cell: its colour, or its mark once it holds a non-finite value.
void cell(fig::Figure& f, const fig::Rect& r, float value, fig::Color c, float pad) {
  fig::Box& b = f.box({r.x + pad, r.y + pad, std::max(0.5f, r.w - 2 * pad), std::max(0.5f, r.h - 2 * pad)}, c);
  b.mark = fig::mark_of(value);
}

float atlas_at(const State& st, int64_t row, int64_t col) {
  return st.atlas[static_cast<size_t>(row * st.layout.atlas_cols + col)];
}

// Room the labels take around the cells: the widest token left of the blocks, a line of
// head names above them.
constexpr float kNameRow = 44;
float row_label_width(const std::vector<State>& states) {
  float w = 0;
  for (const State& st : states)
    for (const auto& r : st.rows) w = std::max(w, fig::text_width(r, fig::kBodySize));
  return w > 0 ? w + 16 : 0;
}

// The frame of a move: both layouts' extent, cells square, inside the visual area less the
// labels' room.
Frame move_frame(const fig::Rect& visual, float label_w, const State& a, const State& b) {
  const fig::Rect cells{visual.x + label_w, visual.y + kNameRow, visual.w - label_w, visual.h - kNameRow};
  return frame_for(cells, std::max(a.layout.width, b.layout.width), std::max(a.layout.height, b.layout.height));
}

// A state's labels at `fade` (0: the background, 1: the text colour): the head name over each
// head's block where it fits, the tokens left of the leftmost blocks where a row holds a line
// at >= kLabelMin. During a move the old labels fade out and the new ones in, as the cells go.
void draw_labels(fig::Figure& f, const Frame& fr, const State& st, float fade, const fig::Theme& th,
                 lessons::Lang lang) {
  if (fade <= 0 || st.layout.blocks.empty()) return;
  const fig::Color ink = fade >= 1 ? th.text : fig::mix(th.background, th.text, fade);
  float left = st.layout.blocks.front().x, top = st.layout.blocks.front().y;
  for (const Block& b : st.layout.blocks) left = std::min(left, b.x), top = std::min(top, b.y);
  const float row_size = std::min(fig::kBodySize, fr.s * 0.8f);
  const bool names_between = kBlockGap * fr.s >= fig::kLabelMin * 1.3f;
  for (const Block& b : st.layout.blocks) {
    const fig::Rect r = fr.map({b.x, b.y, static_cast<float>(b.cols), static_cast<float>(b.rows)});
    if (b.head >= 0 && (b.y == top || names_between)) {
      const std::string name = head_word(lang) + std::to_string(b.head);
      if (fig::text_width(name, fig::kLabelMin, true) + 8 <= r.w)
        f.text(r.x + r.w / 2, r.y - 22, name, fig::kLabelMin, ink, fig::Anchor::Middle, true, "label");
    }
    if (b.x == left && row_size >= fig::kLabelMin && static_cast<int64_t>(st.rows.size()) == b.rows)
      for (int64_t i = 0; i < b.rows; ++i)
        f.text(r.x - 10, r.y + (static_cast<float>(i) + 0.5f) * fr.s, st.rows[static_cast<size_t>(i)], row_size, ink,
               fig::Anchor::End, false, "label");
  }
}

// The move from `a` to `b` at eased progress t, cells placed by `fr`.
void draw_move(fig::Figure& f, const Frame& fr, const State& a, const State& b, float t, const fig::Theme& th) {
  const float pad = fr.s >= 8 ? std::min(1.5f, fr.s * 0.06f) : 0.0f;
  const TransitionKind kind = transition_kind(a.step, *b.step);
  std::vector<Segment> segs;
  if (kind == TransitionKind::Rearrange && a.step->storage_id == b.step->storage_id)
    segs = match_by_storage(a.layout, b.layout);
  else if ((kind == TransitionKind::Copy || kind == TransitionKind::Elementwise) && a.layout.numel() == b.layout.numel())
    segs = match_by_index(a.layout, b.layout);
  if (!segs.empty()) {
    const float e = ease(t);
    for (const Segment& sg : segs) {
      const Rect r = lerp(sg.from, sg.to, e);
      for (int32_t i = 0; i < sg.length; ++i) {
        const float va = atlas_at(a, sg.from_row, sg.from_col + i), vb = atlas_at(b, sg.to_row, sg.to_col + i);
        const float cw = r.w / static_cast<float>(sg.length);
        const float v = e < 0.5f ? va : vb;  // the mark switches halfway, the colour fades
        cell(f, fr.map({r.x + cw * static_cast<float>(i), r.y, cw, r.h}), v,
             mix(value_color(a, va, th), value_color(b, vb, th), e), pad);
      }
    }
    return;
  }
  // Products and new inputs: the old step fades out, then the new one forms row by row.
  const State& shown = t < 0.5f ? a : b;
  const float p = t < 0.5f ? 1.0f - t * 2 : (t - 0.5f) * 2;
  for (int64_t e = 0; e < shown.layout.numel(); ++e) {
    const Place& pl = shown.layout.places[static_cast<size_t>(e)];
    const Block& bl = shown.layout.blocks[static_cast<size_t>(pl.block)];
    const float v = atlas_at(shown, bl.atlas_row + pl.row, pl.col);
    float amount = p;
    if (&shown == &b) amount = reveal(pl.row, pl.col, bl.rows, bl.cols, p, false);
    if (amount <= 0) continue;
    cell(f, fr.map(shown.layout.rect(e)), v, mix(th.background, value_color(shown, v, th), amount), pad);
  }
}

}  // namespace

Animation make_animation(const Scenario& scenario, const RunData& run, const AnimationSpec& spec) {
  const auto path = animation_path(run, spec.from, spec.to);
  const int64_t batch = spec.batch < 0 ? scenario.focus_batch : spec.batch;
  const auto& trace = run.run.trace;
  if (batch < 0 || batch >= trace.at(path.front()).out.shape()[0])
    throw Error("batch " + std::to_string(batch) + " is outside the tensor");
  std::vector<State> states;
  for (const auto& name : path) states.push_back(state_of(run, trace.at(name), batch, spec.lang));
  const fig::Theme& th = fig::theme_by_name(spec.theme);
  const int moves = static_cast<int>(states.size()) - 1;
  const float label_w = row_label_width(states);

  auto frame = [&](int move, float t) {
    const State& a = states[static_cast<size_t>(move)];
    const State& b = states[static_cast<size_t>(move + 1)];
    fig::SlideSpec s;
    s.title = a.step->name + "  →  " + b.step->name;
    s.caption = step_caption(t < 0.5f ? a.step->name : b.step->name, spec.lang);
    s.footer = "attnsim · " + scenario.name + " · " + spec.from + " → " + spec.to;
    s.legend = (t < 0.5f ? a : b).legend;
    fig::Slide slide = fig::make_slide(s, th);
    const Frame fr = move_frame(slide.visual, label_w, a, b);
    draw_move(slide.figure, fr, a, b, t, th);
    draw_labels(slide.figure, fr, a, 1 - 2 * t, th, spec.lang);
    draw_labels(slide.figure, fr, b, 2 * t - 1, th, spec.lang);
    return slide.figure;
  };

  Animation out;
  const int hold_cs = 100;  // a still second at each end
  const int delay = std::max(2, 100 / spec.fps);
  if (spec.reduced_motion) {
    // Three still frames: the first step, the step halfway along (or the halfway point of a
    // single move), the last step.
    const int mid = moves / 2;
    out.frames = {frame(0, 0.0f), moves == 1 ? frame(0, 0.5f) : frame(mid - 1, 1.0f), frame(moves - 1, 1.0f)};
    out.delay_cs = {150, 150, 200};
    return out;
  }
  const int per = frames_per_move(moves, spec.fps, spec.seconds);
  for (int m = 0; m < moves; ++m)
    for (int i = 0; i < per; ++i) {
      out.frames.push_back(frame(m, static_cast<float>(i) / static_cast<float>(per - 1)));
      out.delay_cs.push_back(i == per - 1 || (m == 0 && i == 0) ? hold_cs / 2 : delay);
    }
  out.delay_cs.back() = hold_cs;
  return out;
}

}  // namespace attnsim::app
