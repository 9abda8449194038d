// The whole-model overview as a figure. See overview_figure.h.
//   [SECTION] parts     text that fits or is left out, chips, add nodes, the heads' maps
//   [SECTION] blocks    a block closed (its steps as chips and maps) and open (its steps listed)
//   [SECTION] norms     the stream's norm per position and stage, every row labelled
//   [SECTION] layout    the stages over (a panel) or beside (a slide) the norms
#include "views/overview_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "figure/slide.h"
#include "figure/text_metrics.h"
#include "views/step_names.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

constexpr float kSize = fig::kLabelMin, kSmall = 22, kGap = 8, kPad = 6;
constexpr float kRow = kSize * 1.25f;       // a norm row that holds its label (a text box is 1.2 x its size)
// The smallest norm label, and the row that holds it: 19.5 units is 11.1 px at the UI's 100 %
// (16 px = 28 units), over the 11 px floor; a 720p panel then holds 31 labelled rows.
constexpr float kNormLabelMin = 19.5f, kRowMin = kNormLabelMin * 1.25f;
constexpr float kChip = kSize * 1.35f;      // a step's chip in a closed block
constexpr float kPlus = 26;                 // an add into the stream
constexpr float kStepRow = kSize * 1.45f;   // a row of the open block's list
constexpr float kMapGap = 3, kMaxMap = 90, kMaxOpenMap = 150;
// Okabe-Ito: attention blue, the MLP bluish green (apart with deuteranopia).
const fig::Color kAttn = fig::rgb(0x0072B2), kMlp = fig::rgb(0x009E73);

// The steps the open block lists, when the run has them: Q/K/V, the heads, W_O, the add, the MLP.
constexpr const char* kListed[] = {"norm_attn", "q_proj", "k_proj",   "v_proj",   "q_rot",  "k_rot",
                                   "alpha",     "ctx_heads", "out",   "resid_attn", "norm_mlp", "mlp_gate",
                                   "mlp_up",    "mlp_act",   "mlp_down", "resid_mlp"};

// What the run says about the model's blocks.
struct Facts {
  int64_t L = 0, T = 0, H = 0;
  bool norms = false, pos = false, final_norm = false, mlp = false;
  int64_t map_cols = 1;  // a closed block's maps per row
};


Facts facts_of(const OverviewInput& in) {
  const WholeRun& r = *in.run;
  Facts k;
  k.L = r.layers();
  k.T = static_cast<int64_t>(in.tokens.size());
  k.H = r.head_maps.empty() ? 0 : static_cast<int64_t>(r.head_maps.front().size());
  const bool known = !r.block_steps.empty();  // a run made by whole_run() lists its steps
  k.norms = known && r.ran("norm_attn");
  k.pos = r.ran("pos_embed");
  k.final_norm = r.ran("norm_final");
  k.mlp = known ? r.ran("mlp_down") : in.mlp;
  return k;
}

// [SECTION] parts

bool fits(const std::string& s, float size, float room, bool bold = false) { return fig::text_width(s, size, bold) <= room; }

// A line given `room` units: whole where it fits, else cut with "…" (which the tests refuse).
void line_in(fig::Figure& f, float x, float y, const std::string& s, float size, float room, fig::Color c, fig::Anchor a,
             bool bold, const char* role) {
  f.text(x, y, fig::fit_text(s, size, room, bold), size, c, a, bold, role);
}

// `s` centred in `r` on as many lines as `r` holds, when every word fits there; else nothing
// (a label is whole or absent, never cut).
bool lines_in(fig::Figure& f, const fig::Rect& r, const std::string& s, fig::Color c, bool bold = false) {
  const float line = kSize * 1.25f, room = r.w - 8;
  const int most = static_cast<int>((r.h - 2) / line);
  if (most < 1 || room <= 0) return false;
  const std::vector<std::string> lines = fig::wrap_text(s, kSize, room, most, bold);
  for (const std::string& l : lines)  // a cut word, or words left over, end in "…"
    if (!fits(l, kSize, room, bold) || l.find("…") != std::string::npos) return false;
  const float y0 = r.y + r.h / 2 - line * static_cast<float>(lines.size() - 1) / 2;
  for (size_t i = 0; i < lines.size(); ++i)
    f.text(r.x + r.w / 2, y0 + line * static_cast<float>(i), lines[i], kSize, c, fig::Anchor::Middle, bold, "label");
  return true;
}

// A tinted box naming a step: its display words, or its stable name where the words do not fit.
void chip(fig::Figure& f, const fig::Theme& th, const fig::Rect& r, fig::Color tint, const std::string& step,
          const std::string& words, Lang lang) {
  f.box(r, fig::mix(th.background, tint, 0.35f));
  for (const std::string& s : {words, step_display_name(step, lang), step})
    if (!s.empty() && lines_in(f, r, s, th.text)) return;
}

// The add into the residual stream: a framed square with a plus, centred at (cx, cy).
void plus(fig::Figure& f, const fig::Theme& th, float cx, float cy) {
  const float h = kPlus / 2 - 2;
  f.box({cx - h, cy - h, 2 * h, 2 * h}, th.background, th.text, 2);
  f.line(cx - h + 5, cy, cx + h - 5, cy, th.text, 2);
  f.line(cx, cy - h + 5, cx, cy + h - 5, th.text, 2);
}

// The heads' maps as a grid `cols` wide, each `side` units square.
struct MapGrid {
  int64_t cols = 1, rows = 0;
  float side = 0;
  float width() const { return static_cast<float>(cols) * side + static_cast<float>(cols - 1) * kMapGap; }
  float height() const { return rows == 0 ? 0 : static_cast<float>(rows) * side + static_cast<float>(rows - 1) * kMapGap; }
};

MapGrid map_grid(int64_t heads, float width, float most, int64_t cols) {
  MapGrid g;
  if (heads <= 0) return g;
  g.cols = std::clamp<int64_t>(cols, 1, heads);
  g.rows = (heads + g.cols - 1) / g.cols;
  g.side = std::max(1.0f, std::min(most, (width - static_cast<float>(g.cols - 1) * kMapGap) / static_cast<float>(g.cols)));
  return g;
}


// Block l's maps in grid `g`, its top-left at (x, y); each map's rect into `rects`.
void add_maps(fig::Figure& f, const fig::Theme& th, const WholeRun& run, int64_t l, const MapGrid& g, float x, float y,
              std::vector<fig::Rect>& rects) {
  const auto& maps = run.head_maps[static_cast<size_t>(l)];
  for (size_t h = 0; h < maps.size(); ++h) {
    const int64_t i = static_cast<int64_t>(h);
    const fig::Rect r{x + static_cast<float>(i % g.cols) * (g.side + kMapGap), y + static_cast<float>(i / g.cols) * (g.side + kMapGap),
                      g.side, g.side};
    fig::Heatmap hm;
    hm.rect = r;
    hm.rows = hm.cols = run.map_size;
    hm.values = maps[h];
    hm.lo = 0;  // the weights' own range, as the tensor view's shared scale
    hm.hi = 1;
    hm.gap = th.gap;
    f.heatmap(std::move(hm));
    f.box(r, {0, 0, 0, 0}, th.frame, 1);
    rects.push_back(r);
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = shape.size() > 1 && shape.front() == 1 ? 1 : 0; i < shape.size(); ++i)  // batch 1 left out
    s += (s.empty() ? "" : " × ") + std::to_string(shape[i]);
  return s;
}

fig::Color step_tint(const fig::Theme& th, const std::string& step) {
  if (step.rfind("norm", 0) == 0) return th.muted;
  if (step.rfind("mlp", 0) == 0) return kMlp;
  return kAttn;
}

// [SECTION] blocks

// Maps per row in a closed block `width` wide: the fewest that keep the maps no taller than
// the block is wide (or 180 units), so each map is as large as the column allows.
int64_t closed_cols(int64_t heads, float width) {
  for (int64_t c = 1; c < heads; ++c) {
    const MapGrid g = map_grid(heads, width - 4 * kPad, kMaxMap, c);
    if (g.height() <= std::max(width, 180.0f)) return c;
  }
  return std::max<int64_t>(heads, 1);
}

float closed_height(const Facts& k, float width) {
  const MapGrid g = map_grid(k.H, width - 4 * kPad, kMaxMap, k.map_cols);
  float h = kPad;
  if (k.norms) h += kChip + kGap / 2;
  h += g.height() + 2 * kPad + kGap / 2 + kPlus;
  if (k.mlp) h += (k.norms ? kChip + kGap / 2 : 0) + kGap / 2 + kChip + kGap / 2 + kPlus;
  return h + kPad;
}

// A closed block inside `r`: norm, the heads' maps on the attention's tint, the add, norm,
// MLP, the add.
void add_closed(fig::Figure& f, const fig::Theme& th, const Facts& k, const WholeRun& run, int64_t l, const fig::Rect& r,
                Lang lang, std::vector<fig::Rect>& maps) {
  const float x = r.x + kPad, w = r.w - 2 * kPad, cx = r.x + r.w / 2;
  float y = r.y + kPad;
  const std::string layer = "layer_" + std::to_string(l) + "/";
  if (k.norms) {
    chip(f, th, {x, y, w, kChip}, th.muted, layer + "norm_attn", tr_in(lang, "norm"), lang);
    y += kChip + kGap / 2;
  }
  const MapGrid g = map_grid(k.H, w - 2 * kPad, kMaxMap, k.map_cols);
  const fig::Rect attn{x, y, w, g.height() + 2 * kPad};
  f.box(attn, fig::mix(th.background, kAttn, 0.35f));
  add_maps(f, th, run, l, g, cx - g.width() / 2, y + kPad, maps);
  y = attn.bottom() + kGap / 2;
  plus(f, th, cx, y + kPlus / 2);
  y += kPlus;
  if (!k.mlp) return;
  y += kGap / 2;
  if (k.norms) {
    chip(f, th, {x, y, w, kChip}, th.muted, layer + "norm_mlp", tr_in(lang, "norm"), lang);
    y += kChip + kGap / 2;
  }
  chip(f, th, {x, y, w, kChip}, kMlp, layer + "mlp", "MLP", lang);
  y += kChip + kGap / 2;
  plus(f, th, cx, y + kPlus / 2);
}

std::vector<const StepShape*> listed_steps(const WholeRun& run) {
  std::vector<const StepShape*> out;
  for (const StepShape& s : run.block_steps)
    if (std::find_if(std::begin(kListed), std::end(kListed), [&](const char* n) { return s.name == n; }) != std::end(kListed))
      out.push_back(&s);
  return out;
}

constexpr float kGutter = 40;  // the stream's line and its adds, left of the open block's list

// The width one row of the open block's list needs: name, stable name, shape.
float row_width(const StepShape& s, Lang lang) {
  return kGutter + fig::text_width(step_display_name(s.name, lang), kSize) + 12 + fig::text_width(s.name, kSmall) + 16 +
         fig::text_width(shape_text(s.shape), kSize) + 12;
}

float open_width(const WholeRun& run, Lang lang) {
  float w = 0;
  for (const StepShape* s : listed_steps(run)) w = std::max(w, row_width(*s, lang));
  return w + 2 * kPad;
}

float open_maps_height(const Facts& k, float width) {
  const MapGrid g = map_grid(k.H, width - kGutter - 2 * kPad, kMaxOpenMap, k.H);
  return g.height() + kSize * 1.3f + kGap;
}

// A row's height in an open block `width` wide: one line where every row's name, stable name
// and shape fit on one, else two (the name, then the stable name and the shape).
float step_row(const WholeRun& run, float width, Lang lang) { return open_width(run, lang) <= width ? kStepRow : kSize * 2.8f; }

float open_height(const WholeRun& run, const Facts& k, float width, Lang lang) {
  return kPad + kStepRow + kGap + static_cast<float>(listed_steps(run).size()) * step_row(run, width, lang) +
         open_maps_height(k, width) + kPad;
}

// The open block inside `r`: its title (a click closes it), then each step it runs in order,
// the adds on the stream's line at the left, the other steps indented from it; the heads'
// maps, larger, under the attention weights.
void add_open(fig::Figure& f, const fig::Theme& th, const Facts& k, const WholeRun& run, int64_t l, const fig::Rect& r,
              Lang lang, OverviewLayout& out) {
  const float x = r.x + kPad, w = r.w - 2 * kPad;
  const std::string layer = "layer_" + std::to_string(l);
  out.header = {x, r.y + kPad, w, kStepRow};
  f.box(out.header, fig::mix(th.background, th.muted, 0.2f));
  const std::string title = step_display_name(layer, lang);
  line_in(f, x + 10, out.header.y + kStepRow / 2, title, kSize, w - 20, th.text, fig::Anchor::Start, true, "label");
  const float title_end = x + 10 + fig::text_width(title, kSize, true) + 12;
  const std::string close = tr_in(lang, "click here to close");
  if (fits(layer, kSmall, w - (title_end - x) - fig::text_width(close, kSmall) - 24))
    f.text(title_end, out.header.y + kStepRow / 2, layer, kSmall, th.muted, fig::Anchor::Start, false, "note");
  if (fits(close, kSmall, x + w - title_end - 10))
    f.text(x + w - 10, out.header.y + kStepRow / 2, close, kSmall, th.muted, fig::Anchor::End, false, "note");

  float y = out.header.bottom() + kGap;
  const float gx = x + kGutter / 2, top = y;
  f.line(gx, top, gx, r.bottom() - kPad, th.muted, 4);  // the stream through the block
  const float rh = step_row(run, r.w, lang);
  const bool two = rh > kStepRow;
  for (const StepShape* s : listed_steps(run)) {
    const bool add = s->name.rfind("resid_", 0) == 0;
    const fig::Rect row{x + kGutter, y + 2, w - kGutter, rh - 4};
    if (add) {
      plus(f, th, gx, y + rh / 2);
      f.line(gx + kPlus / 2, y + rh / 2, row.x, y + rh / 2, th.muted, 2);
    } else {
      f.box(row, fig::mix(th.background, step_tint(th, s->name), 0.25f));
    }
    const std::string name = step_display_name(s->name, lang), shape = shape_text(s->shape);
    const float shape_w = fig::text_width(shape, kSize) + 12;
    // One line: name, stable name, shape. Two: the name, then the stable name and the shape.
    const float name_y = two ? y + rh * 0.28f : y + rh / 2, info_y = two ? y + rh * 0.72f : y + rh / 2;
    line_in(f, row.x + 10, name_y, name, kSize, two ? row.w - 20 : row.w - 12 - shape_w, th.text, fig::Anchor::Start, add, "label");
    const float stable_x = two ? row.x + 10 : row.x + 10 + fig::text_width(name, kSize, add) + 12;
    if (fits(s->name, kSmall, row.right() - shape_w - stable_x - 4))
      f.text(stable_x, info_y, s->name, kSmall, th.muted, fig::Anchor::Start, false, "note");
    if (shape_w < row.w / 2 || two)
      f.text(row.right() - 8, info_y, shape, kSize, th.muted, fig::Anchor::End, false, "label");
    out.steps.push_back({s->name, {row.x, y, row.w, rh}});
    y += rh;
    if (s->name != "alpha") continue;
    // Each head's weights under the step that makes them, its name beneath where it fits.
    const MapGrid g = map_grid(k.H, row.w - 2 * kPad, kMaxOpenMap, k.H);
    add_maps(f, th, run, l, g, row.x + kPad, y + kGap / 2, out.heads[static_cast<size_t>(l)]);
    for (int64_t h = 0; h < k.H; ++h) {
      const fig::Rect& m = out.heads[static_cast<size_t>(l)][static_cast<size_t>(h)];
      const std::string head = step_display_name(layer + "/head_" + std::to_string(h), lang);
      const std::string shown = fits(head, kSize, g.side) ? head : std::to_string(h);
      if (fits(shown, kSize, g.side + kMapGap) && h / g.cols == g.rows - 1)
        f.text(m.x + m.w / 2, m.bottom() + kSize * 0.65f, shown, kSize, th.muted, fig::Anchor::Middle, false, "label");
    }
    y += open_maps_height(k, r.w - 2 * kPad);
  }
}

// [SECTION] norms

// Where the norms go: the token labels right-aligned at `label_right` in `label_room`, one
// column per stage reached (x, width: embed, then each block), rows from `top`, `row_h` each;
// the answer beside the last row in the two `answer` columns once the logits are reached.
struct NormPlace {
  float label_right = 0, label_room = 0, top = 0, row_h = kRow;
  std::vector<std::pair<float, float>> cols;  // embed, block 0 … block L−1
  std::pair<float, float> answer, prob;
};

std::string answer_prob(const WholeRun& run) {
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f %%", 100 * run.lens.rows.back().top_prob);
  return pct;
}

void add_norms(fig::Figure& f, const fig::Theme& th, const OverviewInput& in, const Facts& k, const NormPlace& p,
               int64_t shown, bool end, OverviewLayout& out) {
  const WholeRun& run = *in.run;
  fig::Heatmap hm;
  const int64_t cols = std::min(shown + 1, k.L + 1);  // embed, then each block reached
  hm.rect = {p.cols.front().first, p.top, p.cols[static_cast<size_t>(cols - 1)].first + p.cols[static_cast<size_t>(cols - 1)].second -
                                                p.cols.front().first,
             p.row_h * static_cast<float>(k.T)};
  hm.rows = k.T;
  hm.cols = cols;
  const auto ends = fig::colormap_ends(fig::ColorMapId::Viridis, 0, static_cast<float>(run.max_stream_norm()));
  hm.lo = ends[0];
  hm.hi = ends[1];
  hm.gap = th.gap;
  for (int64_t t = 0; t < k.T; ++t)
    for (int64_t s = 0; s < cols; ++s) hm.values.push_back(static_cast<float>(run.stream_norm[static_cast<size_t>(s)][static_cast<size_t>(t)]));
  out.norm_item = f.items.size();
  f.heatmap(std::move(hm));
  // Every row its label, as large as the row holds (in a panel down to kNormLabelMin); a
  // longer sequence than that, every k-th (a slide keeps the label size).
  const float label = in.grow ? std::clamp(p.row_h / 1.25f, kNormLabelMin, kSize) : kSize;
  const int64_t every = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(label * 1.25f / std::max(p.row_h, 1.0f) - 1e-4f)));
  for (int64_t t = 0; t < k.T; ++t) {
    if (t % every != 0) continue;
    out.row_labels.push_back(f.items.size());
    line_in(f, p.label_right, p.top + p.row_h * (static_cast<float>(t) + 0.5f), in.tokens[static_cast<size_t>(t)], label,
                     p.label_room, th.text, fig::Anchor::End, false, "label");
  }
  if (!end || k.T == 0) return;
  // Each part whole where its column holds it (an open block leaves the end columns narrow).
  const float y = p.top + p.row_h * (static_cast<float>(k.T) - 0.5f);
  const std::string answer = "→ " + in.answer, pct = answer_prob(run);
  if (p.prob.second <= 0) {  // one column: the answer and its probability on one line
    if (fits(answer + "  " + pct, kSize, p.answer.second - 8, true))
      f.text(p.answer.first + 8, y, answer + "  " + pct, kSize, th.text, fig::Anchor::Start, true, "label");
    return;
  }
  if (fits(answer, kSize, p.answer.second - 8, true))
    f.text(p.answer.first + p.answer.second / 2, y, answer, kSize, th.text, fig::Anchor::Middle, true, "label");
  if (fits(pct, kSize, p.prob.second - 8))
    f.text(p.prob.first + p.prob.second / 2, y, pct, kSize, th.text, fig::Anchor::Middle, false, "label");
}

// [SECTION] layout

// A norm row's height: the room shared by the rows, up to twice a label's; at least the
// smallest label's where the figure may grow.
float row_height(const OverviewInput& in, float room, int64_t rows) {
  const float share = std::min(2 * kRow, room / static_cast<float>(std::max<int64_t>(rows, 1)));
  return in.grow ? std::max(kRowMin, share) : std::max(share, 1.0f);
}

// The first of `names` that fits `room`, or "".
std::string first_fitting(std::initializer_list<std::string> names, float room, bool bold) {
  for (const std::string& n : names)
    if (fits(n, kSize, room, bold)) return n;
  return "";
}

// The stages' widths across `avail`: even, but the embedding as wide as its chips' words need
// (up to a third more), the blocks sharing what it takes.
std::vector<float> column_widths(const Facts& k, float avail, Lang lang) {
  const float even = avail / static_cast<float>(k.L + 3);
  float need = 0;
  for (const char* word : {"token", "position"}) need = std::max(need, fig::text_width(tr_in(lang, word), kSize));
  std::vector<float> w(static_cast<size_t>(k.L + 3), even);
  w[0] = std::clamp(need + 2 * kPad + kGap + 12, even, even * 1.35f);
  for (int64_t l = 0; l < k.L; ++l) w[static_cast<size_t>(1 + l)] = even - (w[0] - even) / static_cast<float>(k.L);
  return w;
}

float token_column(const OverviewInput& in, float most, Lang lang) {
  float w = fig::text_width(tr_in(lang, "tokens"), kSize, true);
  for (const std::string& t : in.tokens) w = std::max(w, fig::text_width(t, kSize));
  return std::min(w + 20, most);
}

// The stages as columns at x[i], width w[i] (embed, blocks, logits, probs), their names over
// them from `y`, the boxes from `y` + a name's row, `band_h` tall. Returns the band's bottom.
float add_stages(fig::Figure& f, const fig::Theme& th, const OverviewInput& in, const Facts& k, const std::vector<float>& x,
                 const std::vector<float>& w, float y, float band_h, int64_t shown, Lang lang, OverviewLayout& out) {
  const int64_t L = k.L;
  auto reached = [&](int64_t stage) { return stage <= shown; };
  const float name_y = y + kSize * 0.6f, band_y = y + kSize * 1.4f;
  // Block names: all in words, or all short, so neighbours read alike.
  bool words = true;
  for (int64_t l = 0; l < L; ++l)
    words = words && fits(step_display_name("layer_" + std::to_string(l), lang), kSize, w[static_cast<size_t>(1 + l)] - 6, true);
  auto name = [&](size_t i, const std::string& s) {
    if (!s.empty()) f.text(x[i] + w[i] / 2, name_y, s, kSize, th.text, fig::Anchor::Middle, true, "label");
  };
  name(0, first_fitting({step_display_name("embed", lang), "embed"}, w[0] - 6, true));
  for (int64_t l = 0; l < L; ++l) {
    const std::string layer = "layer_" + std::to_string(l);
    const float room = w[static_cast<size_t>(1 + l)] - 6;
    name(static_cast<size_t>(1 + l), words ? step_display_name(layer, lang) : first_fitting({"L" + std::to_string(l), std::to_string(l)}, room, true));
  }
  name(static_cast<size_t>(L + 1), first_fitting({step_display_name("logits", lang), "logits"}, w[static_cast<size_t>(L + 1)] - 6, true));
  name(static_cast<size_t>(L + 2), first_fitting({step_display_name("probs", lang), "probs"}, w[static_cast<size_t>(L + 2)] - 6, true));

  // The residual stream: one line through every stage, the blocks drawn on it.
  const float stream_y = band_y + std::min(band_h / 2, 120.0f);
  f.line(x[0] - 8, stream_y, x.back() + w.back() + 4, stream_y, th.muted, 6, true);
  auto box = [&](size_t i) {
    const fig::Rect r{x[i] + kGap / 2, band_y, w[i] - kGap, band_h};
    f.box(r, th.background, th.frame, 2);
    return r;
  };
  // The embedding: the token's row of the table (+ its position's), added.
  out.embed = box(0);
  {
    const fig::Rect r = out.embed;
    const float inner = r.h - 2 * kPad - (k.pos ? kPlus + kGap : 0);
    const float h = k.pos ? (inner - kGap / 2) / 2 : inner;
    chip(f, th, {r.x + kPad, r.y + kPad, r.w - 2 * kPad, h}, th.muted, "tok_embed", tr_in(lang, "token"), lang);
    if (k.pos) {
      chip(f, th, {r.x + kPad, r.y + kPad + h + kGap / 2, r.w - 2 * kPad, h}, th.muted, "pos_embed", tr_in(lang, "position"), lang);
      plus(f, th, r.x + r.w / 2, r.bottom() - kPad - kPlus / 2);
    }
  }
  out.heads.assign(static_cast<size_t>(L), {});
  for (int64_t l = 0; l < L; ++l) {
    const fig::Rect r = box(static_cast<size_t>(1 + l));
    out.blocks.push_back(r);
    if (!reached(1 + l)) continue;
    if (l == in.expanded) add_open(f, th, k, *in.run, l, r, lang, out);
    else add_closed(f, th, k, *in.run, l, r, lang, out.heads[static_cast<size_t>(l)]);
  }
  const bool end = reached(L + 1);
  out.logits = box(static_cast<size_t>(L + 1));
  const fig::Rect probs = box(static_cast<size_t>(L + 2));
  if (end) {
    const fig::Rect r = out.logits;
    float top = r.y + kPad;
    if (k.final_norm) {
      const float h = kSize * 2.4f + 6;  // "final norm" on two lines where it needs them
      chip(f, th, {r.x + kPad, top, r.w - 2 * kPad, h}, th.muted, "norm_final", "", lang);
      top += h + kGap / 2;
    }
    chip(f, th, {r.x + kPad, top, r.w - 2 * kPad, r.bottom() - kPad - top}, th.accent, "logits", tr_in(lang, "unembedding"), lang);
    chip(f, th, {probs.x + kPad, probs.y + kPad, probs.w - 2 * kPad, probs.h - 2 * kPad}, th.accent, "probs", "softmax", lang);
  }
  return band_y + band_h;
}

// What the closed blocks' marks mean, under them where a slide has the room: the maps, the
// adds, the norms; each line whole or left out.
// `norms`: the heatmap's caption as the last entry (beside the stages the heatmap's column has
// no line to spare for it); "" for none.
void add_key(fig::Figure& f, const fig::Theme& th, const Facts& k, const fig::Rect& r, Lang lang, const std::string& norms) {
  const float icon = 44, line = kSize * 1.25f;
  float y = r.y;
  auto entry = [&](const std::string& words, auto&& draw_icon) {
    const std::vector<std::string> lines = fig::wrap_text(words, kSize, r.w - icon - 8, 3);
    const float h = std::max(line * static_cast<float>(lines.size()), kPlus);
    if (y + h > r.bottom()) return;
    for (const std::string& l : lines)
      if (l.find("…") != std::string::npos) return;
    draw_icon(r.x + icon / 2, y + line / 2);
    for (size_t i = 0; i < lines.size(); ++i)
      f.text(r.x + icon, y + line * (static_cast<float>(i) + 0.5f), lines[i], kSize, th.text, fig::Anchor::Start, false, "label");
    y += h + kGap;
  };
  entry(tr_in(lang, "each small map: one head's attention weights on this sequence (rows: queries, columns: keys; 0 to 1)"),
        [&](float cx, float cy) {
          fig::Heatmap hm;  // the scale's two ends, as a map's cells
          hm.rect = {cx - 14, cy - 14, 28, 28};
          hm.rows = hm.cols = 2;
          hm.values = {1, 0, 0.5f, 0.5f};
          hm.gap = th.gap;
          f.heatmap(std::move(hm));
        });
  entry(tr_in(lang, "what a step computes is added back into the residual stream"), [&](float cx, float cy) { plus(f, th, cx, cy); });
  if (k.norms)
    entry(tr_in(lang, "norm: each position's vector normalised before the step reads it"), [&](float cx, float cy) {
      f.box({cx - 18, cy - 12, 36, 24}, fig::mix(th.background, th.muted, 0.35f));
    });
  if (!norms.empty())
    entry("→ " + norms, [&](float cx, float cy) {
      fig::Heatmap hm;  // a column of the norms' heatmap: short to long
      hm.rect = {cx - 8, cy - 14, 16, 28};
      hm.rows = 3;
      hm.cols = 1;
      hm.values = {0, 0.5f, 1};
      hm.gap = th.gap;
      f.heatmap(std::move(hm));
    });
}

}  // namespace

OverviewLayout add_overview(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const OverviewInput& in,
                            Lang lang) {
  OverviewLayout out;
  Facts k = facts_of(in);
  const int64_t L = k.L, T = k.T;
  const int64_t shown = in.reveal < 0 ? L + 1 : std::min(in.reveal, L + 1);  // the last stage drawn
  const bool end = shown >= L + 1;
  const bool open = in.expanded >= 0 && in.expanded < L;
  const std::string caption = tr_in(lang, "‖x‖ of the residual stream after each stage, per position");
  const float label_w = token_column(in, area.w * 0.3f, lang);
  const float names_h = kSize * 1.4f;

  // Stacked (a panel, or a slide with room): the stages over the norms, sharing their columns.
  const float avail = area.w - label_w;
  const std::vector<float> hw = column_widths(k, avail, lang);  // the norms' columns, and the closed stages'
  std::vector<float> hx(hw.size(), area.x + label_w);
  for (size_t i = 1; i < hx.size(); ++i) hx[i] = hx[i - 1] + hw[i - 1];
  std::vector<float> w = hw, x = hx;
  if (open) {  // the open block takes what its list needs, over the tokens' column too; the others share the rest
    const float want = std::min(area.w * 0.75f, std::max(open_width(*in.run, lang) + kGap, area.w * 0.5f));
    std::fill(w.begin(), w.end(), (area.w - want) / static_cast<float>(L + 2));
    w[static_cast<size_t>(1 + in.expanded)] = want;
    x[0] = area.x;
    for (size_t i = 1; i < x.size(); ++i) x[i] = x[i - 1] + w[i - 1];
  }
  const float closed_w = w[open && in.expanded == 0 ? 2 : 1];
  k.map_cols = closed_cols(k.H, closed_w - kGap);
  float band_h = closed_height(k, closed_w - kGap);
  if (open) band_h = std::max(band_h, open_height(*in.run, k, w[static_cast<size_t>(1 + in.expanded)] - kGap, lang));
  const std::vector<std::string> cap_lines = fig::wrap_text(caption, kSize, area.right() - hx[0], 2);
  const float caption_h = kSize * (0.6f + 1.25f * static_cast<float>(cap_lines.size()));
  const float stacked_need = names_h + band_h + caption_h + (in.grow ? kRowMin : kRow) * static_cast<float>(T) + kPad;
  // Beside (a slide: wide, no scrolling): the norms get their own narrow columns, and the
  // stages what is left, where that leaves each stage a closed block's room.
  const float stage_w = std::clamp(std::max(fig::text_width("L" + std::to_string(L - 1), kSize, true),
                                            fig::text_width("embed", kSize, true)) + 12, 56.0f, 120.0f);
  const float answer_w = end ? fig::text_width("→ " + in.answer + "  " + answer_prob(*in.run), kSize, true) + 24 : 0;
  const float norms_w = label_w + stage_w * static_cast<float>(L + 1) + answer_w;
  const float flow_w = area.w - norms_w - 2 * kGap * 3;
  const bool side = !open && (in.beside >= 0 ? in.beside == 1
                                              : stacked_need > area.h && area.w >= 1.4f * area.h &&
                                                    flow_w >= 90 * static_cast<float>(L + 3));
  out.beside = side;

  if (!side) {
    if (!open)
      f.text(area.x, area.y + kSize * 0.6f, first_fitting({tr_in(lang, "tokens")}, label_w - 8, true), kSize, th.text,
             fig::Anchor::Start, true, "label");
    const float band_bottom = add_stages(f, th, in, k, x, w, area.y, band_h, shown, lang, out);
    for (size_t i = 0; i < cap_lines.size(); ++i)
      line_in(f, hx[0], band_bottom + kSize * (0.8f + 1.25f * static_cast<float>(i)), cap_lines[i], kSize, area.right() - hx[0],
              th.muted, fig::Anchor::Start, false, "label");
    NormPlace p;
    p.label_right = area.x + label_w - 12;
    p.label_room = label_w - 16;
    p.top = band_bottom + caption_h;
    p.row_h = row_height(in, area.bottom() - p.top - kPad, T);
    for (int64_t s = 0; s <= L; ++s) p.cols.push_back({hx[static_cast<size_t>(s)] + kGap / 2, hw[static_cast<size_t>(s)] - kGap});
    p.answer = {hx[static_cast<size_t>(L + 1)], hw[static_cast<size_t>(L + 1)]};
    p.prob = {hx[static_cast<size_t>(L + 2)], hw[static_cast<size_t>(L + 2)]};
    add_norms(f, th, in, k, p, shown, end, out);
    out.height = std::max(area.h, p.top + p.row_h * static_cast<float>(T) + kPad - area.y);
    return out;
  }

  // Beside (a slide): the stages on the left, the norms on the right with their own columns.
  const std::vector<float> fw = column_widths(k, flow_w, lang);
  k.map_cols = closed_cols(k.H, fw[1] - kGap);
  std::vector<float> fx(fw.size(), area.x + 8);
  for (size_t i = 1; i < fx.size(); ++i) fx[i] = fx[i - 1] + fw[i - 1];
  // The maps as large as the room under the stages allows: fewer a row, down to one.
  const float key_h = kSize * 5;
  while (k.map_cols > 1) {
    Facts taller = k;
    --taller.map_cols;
    if (closed_height(taller, fw[1] - kGap) > area.h - names_h - key_h) break;
    k = taller;
  }
  const float flow_band = std::min(closed_height(k, fw[1] - kGap), area.h - names_h);
  const float band_bottom = add_stages(f, th, in, k, fx, fw, area.y, flow_band, shown, lang, out);
  add_key(f, th, k, {area.x + 8, band_bottom + 3 * kGap, flow_w, area.bottom() - band_bottom - 3 * kGap}, lang, caption);

  const float nx = area.right() - norms_w;
  const float head_y = area.y + kSize * 0.6f;
  NormPlace p;
  p.label_right = nx + label_w - 12;
  p.label_room = label_w - 16;
  p.top = head_y + kSize * 0.9f;
  p.row_h = row_height(in, area.bottom() - p.top - kPad, T);
  for (int64_t s = 0; s <= L; ++s) {
    const float cx = nx + label_w + stage_w * static_cast<float>(s);
    p.cols.push_back({cx + 2, stage_w - 4});
    if (s > shown) continue;
    const std::string head = s == 0 ? first_fitting({step_display_name("embed", lang), "embed"}, stage_w - 4, true)
                                    : first_fitting({"L" + std::to_string(s - 1), std::to_string(s - 1)}, stage_w - 4, true);
    if (!head.empty()) f.text(cx + stage_w / 2, head_y, head, kSize, th.text, fig::Anchor::Middle, true, "label");
  }
  p.answer = {nx + label_w + stage_w * static_cast<float>(L + 1), answer_w};
  p.prob = {0, 0};
  add_norms(f, th, in, k, p, shown, end, out);
  out.height = std::max(area.h, p.top + p.row_h * static_cast<float>(T) + kPad - area.y);
  return out;
}

fig::Figure overview_view_figure(const OverviewInput& in, Lang lang, const std::string& theme, float width, float height,
                                 OverviewLayout* layout) {
  const fig::Theme& th = fig::theme_by_name(theme);
  OverviewInput grown = in;
  grown.grow = true;  // the norms under the stages; beside them where those would scroll and the panel is wide (720p)
  auto build = [&](float h, OverviewLayout* l) {
    fig::Figure f;
    f.width = width;
    f.height = h;
    f.background = th.background;
    f.theme = th.name;
    f.title = tr_in(lang, "the whole model");
    *l = add_overview(f, th, {4, 4, width - 8, h - 8}, grown, lang);
    return f;
  };
  OverviewLayout l;
  fig::Figure f = build(height, &l);
  if (l.height > height - 8 + 0.5f) f = build(l.height + 8, &l);  // every row labelled: the panel scrolls
  if (layout) *layout = l;
  return f;
}

fig::Figure overview_slide(const OverviewInput& in, const std::string& title, Lang lang, const std::string& theme,
                           const std::string& caption) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::SlideSpec spec;
  spec.title = title;
  spec.caption = !caption.empty() ? caption
                                  : tr_in(lang, "Every block reads the residual stream and adds what it writes back into "
                                                "it; the last stream becomes the logits.");
  spec.footer = "attnsim · whole pass";
  spec.legend.map = fig::ColorMapId::Viridis;
  const auto ends = fig::colormap_ends(fig::ColorMapId::Viridis, 0, static_cast<float>(in.run->max_stream_norm()));
  spec.legend.lo = ends[0];
  spec.legend.hi = ends[1];
  spec.legend.what = "‖x‖";
  fig::Slide s = fig::make_slide(spec, th);
  add_overview(s.figure, th, s.visual, in, lang);
  s.figure.title = spec.title;
  s.figure.kind = "overview";
  return s.figure;
}

}  // namespace attnsim::app
