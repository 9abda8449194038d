// Decode panel: a decode scenario token by token.
//   - the tokens, appearing one per step (prompt, generated, evicted, the next one)
//   - the cache of one layer: per KV head a K strip and a V strip of its preallocated slots
//     (columns) by d_k (rows); the step's new K and V rows fly from k_heads / v_heads into
//     their slots (layouts of the real tensors, matched by storage index: layout.h /
//     transition.h), lifted and outlined while they fly
//   - the query heads, coloured by the group whose K/V head they read; the broadcast lines
//     grow from the K head to its r query heads (the stride-0 k_grouped view)
//   - the step's alpha row per query head over the cached slots; on the trained model the
//     slot an induction head should read (after the token's earlier copy) is outlined
//   - memory meter: this model's cache with MHA, GQA and MQA; paged: the block pool, block
//     tables, free list and waste; sinks: the policy switch and a by-position plot (output
//     drift with random weights, next-token loss with the trained model's)
// Everything is sized to the panel so that nothing scrolls at 1280x800 (fit_rows()).
//
// Index
//   [SECTION] state        the run, recomputed when the scenario or the policy changes
//   [SECTION] drawing      tokens, cache strips, broadcast, alpha, meters
//   [SECTION] layout       the row heights that make the drawing fit the panel
//   [SECTION] the panel
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "app/app.h"
#include "app/decode_run.h"
#include "app/frame_texture.h"
#include "app/heat_view.h"
#include "app/i18n.h"
#include "app/layout.h"
#include "app/transition.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "figure/palette.h"

namespace attnsim::app {

// [SECTION] state

// One frame's K and V strips of one layer as colours, drawn as textured quads (draw_cache):
// 8 192 filled rectangles a frame for decode-model (4 K/V heads x K and V x 32 slots x 32
// rows) were most of its frame time under the software rasteriser. Columns: the filled
// slots, then the rows the frame appends (the flight); rows: (2j + 0)·R + e is K head j's
// texel row e, (2j + 1)·R + e its V (R = strip_rows). Computed once per (run, frame, layer, R).
struct StripImage {
  int frame = -1, layer = -1;
  int width = 0, height = 0;  // filled + new_rows, 2·g·R
  int64_t filled = 0;        // columns 0 .. filled-1 are the cache's filled slots
  int64_t dk = 0;
  // Texel rows per strip: dk, or fewer where a component's row is under a pixel (the lesson
  // layout), each then the mean of the components it covers (as the figures' heatmaps do).
  int64_t strip_rows = 0;
  float k_scale = 1, v_scale = 1;
  std::vector<ImU32> rgba;   // height x width, row-major
  // The flight: per new row (j, i), j·n + i, the slot it lands in; empty when the frame's trace
  // has no k_heads / v_heads and append step.
  int64_t new_rows = 0;      // n
  std::vector<int64_t> k_dest, v_dest;
};

struct DecodePanelState {
  std::string computed_for;  // "scenario|policy|model" the run (or the error) belongs to
  std::string scenario;
  std::string policy;        // the policy switch; empty = the scenario's own
  std::string scenario_policy;  // the scenario's own when the switch was last reset
  DecodeRun run;
  std::string error;
  Playback play;
  int layer = 0;
  StripImage image;  // of play.step and layer (strip_image())
};

namespace {

// The run of the scenario on screen under the chosen policy, computed once per change (an
// error is kept too, so a refused run is not retried every frame).
DecodePanelState& state(App& app) {
  if (!app.decode) app.decode = std::make_shared<DecodePanelState>();
  DecodePanelState& s = *app.decode;
  const Scenario& sc = app.session.scenario();
  const bool new_scenario = s.scenario != sc.name;
  // a new scenario, or a lesson step that sets another policy, opens on its own policy
  if (new_scenario || s.scenario_policy != sc.decode.policy) s.policy.clear();
  s.scenario_policy = sc.decode.policy;
  s.scenario = sc.name;
  const std::string policy = s.policy.empty() ? sc.decode.policy : s.policy;
  const std::string& model_dir = app.decode_model_dir.empty() ? app.options.model : app.decode_model_dir;
  const std::string key = sc.name + "|" + policy + "|" + model_dir;
  if (s.computed_for != key) {
    s.computed_for = key;
    s.error.clear();
    try {
      s.run = run_decode(sc, policy, model_dir);
    } catch (const Error& e) {
      s.error = e.what();
      s.run = {};
      app.show_banner(e.what(), true);
    }
    s.image = {};
    s.play = {};
    s.play.hold = 0.5f;
    s.play.duration = 0.8f;
    const int last_layer = std::max<int>(static_cast<int>(s.run.config.layers) - 1, 0);
    // the trained model opens on its last layer, where its induction heads are
    s.layer = new_scenario && s.run.trained ? last_layer : std::min(s.layer, last_layer);
  }
  return s;
}

std::vector<bool> all_active(const DecodePanelState& s) { return std::vector<bool>(s.run.frames.size(), true); }

// [SECTION] drawing

constexpr ImU32 kCopyColour = IM_COL32(255, 150, 20, 255);  // the induction target (panel_model's badge)

// The figures' colour maps (figure/palette.h), so this panel and its slides agree.
ImU32 colour(figure::Color c) { return ImGui::GetColorU32(ImVec4(c.r, c.g, c.b, 1)); }
ImU32 diverging(float v, float scale) {  // PuOr, v / scale in [-1, 1]
  const float x = std::clamp(v / std::max(scale, 1e-6f), -1.0f, 1.0f);
  return colour(figure::colormap(figure::ColorMapId::Diverging, 0.5f + 0.5f * x));
}
ImU32 sequential(float a) { return colour(figure::colormap(figure::ColorMapId::Viridis, a)); }  // alpha in [0, 1]

float abs_max(const Tensor& t) {
  float m = 1e-6f;
  for (float v : t.to_vector()) m = std::max(m, std::fabs(v));
  return m;
}

// Sizes of one frame's drawing (fit_rows() chooses row, alpha_row and q_lines).
struct Geometry {
  ImVec2 origin;         // top-left of the panel's drawing
  float margin = 0;      // left label column
  float cell = 0;        // one position column (tokens)
  float slot = 0;        // one cache slot column (strips, alpha); = cell unless a window rolls
  float row = 0;         // one d_k row of a strip (under a pixel where the panel is short)
  float alpha_row = 0;   // one query head's alpha row
  bool q_lines = true;   // a text line per query head in the bands (else boxes only where that does not fit)
  float width = 0;       // the panel's drawing
  // > 0: the by-position plot sits right of the query heads, from this x to the right edge,
  // beside the strips (a rolling window leaves that room empty); 0: below the alpha rows
  float plot_x = 0;
};

// Texel rows per strip for this geometry: a texel per component down to one pixel each.
int64_t strip_rows(const Geometry& g, int64_t dk) {
  return g.row >= 1.0f ? dk : std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<float>(dk) * g.row)), 1, dk);
}

// Slot of position p in this frame, -1 when no slot holds it (evicted).
int64_t slot_of(const DecodeFrame& f, int64_t p) {
  const auto it = std::find(f.slot_positions.begin(), f.slot_positions.end(), p);
  return it == f.slot_positions.end() ? -1 : static_cast<int64_t>(it - f.slot_positions.begin());
}

void draw_tokens(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, float y,
                 bool evicting) {
  for (size_t p = 0; p <= f.tokens.size(); ++p) {
    const ImVec2 a(g.origin.x + g.margin + static_cast<float>(p) * g.cell, y);
    const ImVec2 b(a.x + g.cell - 2, a.y + g.cell + 4);
    const bool next = p == f.tokens.size();
    const bool kept = next || !evicting || slot_of(f, static_cast<int64_t>(p)) >= 0;
    const bool fresh = !next && static_cast<int64_t>(p) >= f.first_position;
    const int64_t tok = next ? f.next : f.tokens[p];
    dl->AddRectFilled(a, b, next ? IM_COL32(40, 40, 40, 255) : kept ? IM_COL32(46, 66, 92, 255) : IM_COL32(50, 50, 50, 255));
    if (fresh) dl->AddRect(a, b, IM_COL32(250, 220, 80, 255), 0, 0, 2);
    if (next) dl->AddRect(a, b, IM_COL32(150, 150, 150, 255));
    if (!next && static_cast<int64_t>(p) == f.copy_source) dl->AddRect(a, b, kCopyColour, 0, 0, 2);
    const std::string& t = run.label(tok);
    dl->AddText({a.x + (g.cell - 2 - ImGui::CalcTextSize(t.c_str()).x) * 0.5f, a.y + 2},
                kept ? IM_COL32(235, 235, 235, 255) : IM_COL32(120, 120, 120, 255), t.c_str());
    if (!kept) dl->AddLine({a.x, b.y}, {b.x, a.y}, IM_COL32(200, 80, 80, 255), 1.5f);
  }
}

// Band of one K/V group: its K strip over its V strip beside its r query heads.
struct Bands {
  float strip_h = 0, inner = 3, gap = 0, q_pitch = 0, band = 0;
};
Bands bands(const Geometry& g, const MhaConfig& a) {
  const int64_t G = a.kv_group_count(), r = a.heads / G;
  Bands b;
  b.strip_h = static_cast<float>(a.head_dim()) * g.row;
  b.gap = std::max(6.0f, g.row * 1.5f);
  const float kv = 2 * b.strip_h + b.inner;
  b.q_pitch = g.q_lines ? ImGui::GetFontSize() + 2 : std::max(3.0f, (kv + b.gap) / static_cast<float>(r));
  b.band = std::max(kv + b.gap, static_cast<float>(r) * b.q_pitch + (g.q_lines ? b.gap : 0));
  return b;
}

// Slot each new row (j, i) of `heads_step` (B,g,n,dk) lands in: the slot the append view
// `append_step` maps it to, matched by storage index against the cache's own layout (paged:
// the frame's append slots). Empty without those steps.
std::vector<int64_t> landing_slots(const DecodeRun& run, const DecodeFrame& f, const Trace& trace,
                                   const char* heads_step, const char* append_step) {
  const Step* kh = trace.find(heads_step);
  const Step* ap = trace.find(append_step);
  if (!kh || !ap || !kh->out.defined()) return {};
  const MhaConfig& a = run.config.attn;
  const int64_t G = a.kv_group_count(), dk = a.head_dim(), n = kh->out.size(2);
  const bool paged = run.config.block_size > 0;
  const Layout from = make_layout(LayoutKind::Stacked, kh->out, 0);  // (g, n, dk)
  const Dims cache_shape{1, G, run.slots, dk};
  const Layout cache = make_layout(LayoutKind::Stacked, cache_shape, contiguous_strides(cache_shape), 0, 0);
  const Layout dest = paged ? from : make_layout(LayoutKind::Stacked, ap->out, 0);  // views of the storage
  std::vector<int64_t> slots(static_cast<size_t>(G * n));
  for (int64_t e = 0; e < from.numel(); ++e) {
    const Dims idx = from.index_of(e);  // (j, i, c): a row's dk elements share one slot
    int64_t slot = f.append_slots[static_cast<size_t>(idx[1])];
    if (!paged) {
      const int64_t el = cache.element_at_storage(dest.storage[static_cast<size_t>(e)]);
      if (el >= 0) slot = cache.index_of(el)[1];  // (g, slot, dk)
    }
    slots[static_cast<size_t>(idx[0] * n + idx[1])] = slot;
  }
  return slots;
}

// The colours of `frame`'s strips of `layer` and of its new rows, recomputed only when the
// frame or the layer changes.
const StripImage& strip_image(DecodePanelState& s, int frame, int layer, int64_t strip_rows) {
  StripImage& im = s.image;
  if (im.frame == frame && im.layer == layer && im.strip_rows == strip_rows) return im;
  const DecodeRun& run = s.run;
  const DecodeFrame& f = run.frames[static_cast<size_t>(frame)];
  const Tensor& k = f.k_cache[static_cast<size_t>(layer)];  // (g, t', dk)
  const Tensor& v = f.v_cache[static_cast<size_t>(layer)];
  const Trace& trace = f.traces[static_cast<size_t>(layer)];
  const int64_t G = run.config.attn.kv_group_count(), dk = run.config.attn.head_dim();
  im = {};
  im.frame = frame, im.layer = layer;
  im.filled = k.size(1);
  im.dk = dk;
  im.strip_rows = strip_rows;
  im.k_scale = abs_max(k), im.v_scale = abs_max(v);
  im.k_dest = landing_slots(run, f, trace, "k_heads", "k_cache_append");
  im.v_dest = landing_slots(run, f, trace, "v_heads", "v_cache_append");
  const Step* kh = trace.find("k_heads");
  const Step* vh = trace.find("v_heads");
  const bool flight = !im.k_dest.empty() && !im.v_dest.empty();
  if (!flight) im.k_dest.clear(), im.v_dest.clear();
  im.new_rows = flight ? kh->out.size(2) : 0;
  im.width = static_cast<int>(std::max<int64_t>(im.filled + im.new_rows, 1));
  const int64_t R = strip_rows;
  im.height = static_cast<int>(2 * G * R);
  im.rgba.assign(static_cast<size_t>(im.width) * static_cast<size_t>(im.height), IM_COL32(0, 0, 0, 0));
  // texel row e of a strip: the mean of components [e·dk/R, (e+1)·dk/R)
  auto mean = [&](const std::function<float(int64_t)>& at, int64_t e) {
    const int64_t c0 = e * dk / R, c1 = (e + 1) * dk / R;
    float sum = 0;
    for (int64_t c = c0; c < c1; ++c) sum += at(c);
    return sum / static_cast<float>(c1 - c0);
  };
  auto px = [&](int64_t kv, int64_t j, int64_t e, int64_t col) -> ImU32& {
    return im.rgba[static_cast<size_t>(((2 * j + kv) * R + e) * im.width + col)];
  };
  for (int64_t j = 0; j < G; ++j)
    for (int64_t e = 0; e < R; ++e) {
      for (int64_t c = 0; c < im.filled; ++c) {
        px(0, j, e, c) = diverging(mean([&](int64_t x) { return k.at({j, c, x}); }, e), im.k_scale);
        px(1, j, e, c) = diverging(mean([&](int64_t x) { return v.at({j, c, x}); }, e), im.v_scale);
      }
      for (int64_t i = 0; i < im.new_rows; ++i) {
        px(0, j, e, im.filled + i) = diverging(mean([&](int64_t x) { return kh->out.at({0, j, i, x}); }, e), im.k_scale);
        px(1, j, e, im.filled + i) = diverging(mean([&](int64_t x) { return vh->out.at({0, j, i, x}); }, e), im.v_scale);
      }
    }
  return im;
}

// Column `col` of the strip image (K (kv 0) or V (kv 1) of head j: strip_rows texels) drawn into [a, b].
void draw_column(ImDrawList* dl, ImTextureID tex, const StripImage& im, int64_t kv, int64_t j, int64_t col, ImVec2 a,
                 ImVec2 b) {
  const float w = static_cast<float>(im.width), h = static_cast<float>(im.height);
  const float u = static_cast<float>(col), r0 = static_cast<float>((2 * j + kv) * im.strip_rows);
  dl->AddImage(tex, a, b, {u / w, r0 / h}, {(u + 1) / w, (r0 + static_cast<float>(im.strip_rows)) / h});
}

// The new rows of one cache (K, kv 0, or V, kv 1) flying from the new-row columns of the strip
// image into their slots, eased, lifted off the strip mid-flight and outlined so they read
// apart from the filled cells they pass over.
void draw_flight(ImDrawList* dl, const Geometry& g, const StripImage& im, ImTextureID tex, int64_t kv, int64_t G,
                 float t, const std::function<float(int64_t)>& strip_y) {
  const std::vector<int64_t>& dest = kv == 0 ? im.k_dest : im.v_dest;
  if (dest.empty()) return;
  const int64_t n = im.new_rows;
  const float e_t = ease(t), lift = 10.0f * std::sin(3.14159265f * e_t);
  const float new_x = g.origin.x + 4, strip_x = g.origin.x + g.margin;
  const float strip_h = static_cast<float>(im.dk) * g.row;
  std::vector<ImVec4> boxes;  // per (j, i)
  for (int64_t j = 0; j < G; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const Rect ra{new_x + static_cast<float>(i) * g.slot * 0.6f, strip_y(j), g.slot - 1, strip_h};
      const Rect rb{strip_x + static_cast<float>(dest[static_cast<size_t>(j * n + i)]) * g.slot, strip_y(j), g.slot - 1,
                    strip_h};
      const Rect m = lerp(ra, rb, e_t);
      boxes.emplace_back(m.x, m.y - lift, m.x + m.w, m.y - lift + m.h);
    }
  for (const ImVec4& b : boxes)  // a shadow under each flying row
    dl->AddRectFilled({b.x + 3, b.y + 3}, {b.z + 3, b.w + 3}, IM_COL32(0, 0, 0, 150));
  for (int64_t j = 0; j < G; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const ImVec4& b = boxes[static_cast<size_t>(j * n + i)];
      draw_column(dl, tex, im, kv, j, im.filled + i, {b.x, b.y}, {b.z, b.w});
    }
  for (const ImVec4& b : boxes)
    dl->AddRect({b.x - 2, b.y - 2}, {b.z + 2, b.w + 2}, IM_COL32(250, 220, 80, 255), 0, 0, 2.0f);
}

// The K and V strips of one layer, the new rows flying into their slots, the broadcast to
// the query heads. Returns the y below the drawing.
float draw_cache(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, const StripImage& im,
                 int layer, float t, float y) {
  const MhaConfig& a = run.config.attn;
  const int64_t G = a.kv_group_count(), r = a.heads / G;
  const bool paged = run.config.block_size > 0;
  const int64_t bs = run.config.block_size;
  const int64_t filled = im.filled;
  // Contiguous: every preallocated slot; paged: sequence 0's blocks (nothing is preallocated).
  const int64_t slots = paged ? (filled + bs - 1) / bs * bs : run.slots;
  const int64_t columns = paged ? run.config.t_max : run.slots;  // the query heads stay put
  const Bands b = bands(g, a);
  const float strip_x = g.origin.x + g.margin;
  const float fh = ImGui::GetFontSize();
  auto k_y = [&](int64_t j) { return y + static_cast<float>(j) * b.band + (b.band - b.gap - 2 * b.strip_h - b.inner) * 0.5f; };
  auto v_y = [&](int64_t j) { return k_y(j) + b.strip_h + b.inner; };
  auto strip_y = [&](int64_t kv, int64_t j) { return kv == 0 ? k_y(j) : v_y(j); };
  const bool flying = t < 1.0f;
  // slots this frame writes: drawn empty until the rows land
  auto landing = [&](int64_t s) {
    return flying && std::find(f.append_slots.begin(), f.append_slots.end(), s) != f.append_slots.end();
  };
  auto slot_box = [&](int64_t s, float sy) {
    const ImVec2 c0(strip_x + static_cast<float>(s) * g.slot, sy);
    return std::make_pair(c0, ImVec2(c0.x + g.slot - 1, sy + b.strip_h));
  };
  // The filled slots: one quad each, all from one texture (one draw call).
  const ImTextureID tex = frame_texture(im.rgba, im.width, im.height);
  for (int64_t j = 0; j < G; ++j)
    for (int64_t kv = 0; kv < 2; ++kv)
      for (int64_t s = 0; s < std::min(slots, filled); ++s)
        if (!landing(s)) {
          const auto [c0, c1] = slot_box(s, strip_y(kv, j));
          draw_column(dl, tex, im, kv, j, s, c0, c1);
        }
  // Labels, the empty preallocated slots, the strip's outline, block boundaries.
  for (int64_t j = 0; j < G; ++j)
    for (int64_t kv = 0; kv < 2; ++kv) {
      const float sy = strip_y(kv, j);
      char label[32];
      std::snprintf(label, sizeof label, "%s %lld", kv == 0 ? "K" : "V", static_cast<long long>(j));
      dl->AddText({g.origin.x + 2, sy + b.strip_h * 0.5f - fh * 0.5f}, head_colour(j), label);
      for (int64_t s = 0; s < slots; ++s)
        if (s >= filled || landing(s)) {
          const auto [c0, c1] = slot_box(s, sy);
          dl->AddRect(c0, c1, IM_COL32(90, 90, 90, 255));  // preallocated, empty
        }
      dl->AddRect({strip_x - 1, sy - 1}, {strip_x + static_cast<float>(slots) * g.slot, sy + b.strip_h + 1},
                  head_colour(j, 0.8f));
      if (paged)  // block boundaries
        for (int64_t bb = bs; bb < slots; bb += bs) {
          const float bx = strip_x + static_cast<float>(bb) * g.slot - 1;
          dl->AddLine({bx, sy - 2}, {bx, sy + b.strip_h + 2}, IM_COL32(235, 235, 235, 255), 2.0f);
        }
    }
  if (flying) {
    draw_flight(dl, g, im, tex, 0, G, t, k_y);
    draw_flight(dl, g, im, tex, 1, G, t, v_y);
  }
  // Broadcast: K/V head j feeds query heads j·r .. j·r + r - 1 (the stride-0 k_grouped view).
  const float qx = strip_x + static_cast<float>(columns) * g.slot + 40;
  const float q_h = std::min(b.q_pitch - 2, fh + 6);
  const bool q_labels = q_h >= fh;  // a label fits in the box
  for (int64_t j = 0; j < G; ++j) {
    const float mid = k_y(j) + b.strip_h + b.inner * 0.5f;
    const ImVec2 src(strip_x + static_cast<float>(slots) * g.slot + 2, mid);
    const float q_top = mid - static_cast<float>(r) * b.q_pitch * 0.5f;
    for (int64_t q = 0; q < r; ++q) {
      const int64_t head = j * r + q;
      const float qy = q_top + static_cast<float>(q) * b.q_pitch + (b.q_pitch - 2 - q_h) * 0.5f;
      const ImVec2 dst(qx, qy + q_h * 0.5f);
      const float grow = r > 1 ? ease(std::clamp(t * 1.6f - 0.6f * static_cast<float>(q) / static_cast<float>(r), 0.0f, 1.0f)) : 1.0f;
      dl->AddLine(src, {src.x + (dst.x - src.x) * grow, src.y + (dst.y - src.y) * grow}, head_colour(j, 0.9f), 1.5f);
      dl->AddRectFilled({qx, qy}, {qx + 34, qy + q_h}, head_colour(j, 0.85f));
      char label[24];
      std::snprintf(label, sizeof label, "q%lld", static_cast<long long>(head));
      if (q_labels) dl->AddText({qx + 4, qy + (q_h - fh) * 0.5f}, IM_COL32(20, 20, 20, 255), label);
    }
  }
  const float below = y + static_cast<float>(G) * b.band;
  if (const Step* kg = f.traces[static_cast<size_t>(layer)].find("k_grouped"); kg && kg->out.defined()) {
    const std::string s = std::string("k_grouped ") + format_dims(kg->out.shape()) + tr(" strides ") +
                          format_dims(kg->out.strides()) + " · " + tr("no copy");
    dl->AddText({strip_x, below}, IM_COL32(200, 200, 200, 255), s.c_str());
  }
  return below + fh + 4;
}

// alpha of the step's last new row, per query head, under the slots it weighs.
float draw_alpha(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, int layer, float y) {
  const Tensor& al = f.alpha[static_cast<size_t>(layer)];  // (h, t')
  const int64_t h = al.size(0), n = al.size(1), r = h / run.config.attn.kv_group_count();
  const float rh = g.alpha_row, fh = ImGui::GetFontSize();
  float top = 1e-6f;  // colours run to the frame's largest weight (1/t' is dark otherwise)
  for (float v : al.to_vector()) top = std::max(top, v);
  dl->AddText({g.origin.x, y}, IM_COL32(220, 220, 220, 255), tr("alpha: the newest row's weights over the slots"));
  const int64_t copy_slot = f.copy_source >= 0 ? slot_of(f, f.copy_source) : -1;
  if (copy_slot >= 0) {  // the trained model: where an induction head should look
    const std::string note = trf("orange: position %lld, after the earlier '%s'", static_cast<long long>(f.copy_source),
                                 run.label(f.tokens[static_cast<size_t>(f.copy_source - 1)]).c_str());
    const float x = g.origin.x + ImGui::CalcTextSize(tr("alpha: the newest row's weights over the slots")).x + 16;
    dl->AddText({x, y}, kCopyColour, note.c_str());
  }
  y += fh + 2;
  for (int64_t i = 0; i < h; ++i) {
    const float ry = y + static_cast<float>(i) * (rh + 1);
    dl->AddRectFilled({g.origin.x + g.margin - 10, ry}, {g.origin.x + g.margin - 3, ry + rh}, head_colour(i / r));
    for (int64_t s = 0; s < n; ++s) {
      const float x = g.origin.x + g.margin + static_cast<float>(s) * g.slot;
      dl->AddRectFilled({x, ry}, {x + g.slot - 1, ry + rh}, sequential(al.at({i, s}) / top));
    }
  }
  const float bottom = y + static_cast<float>(h) * (rh + 1);
  if (copy_slot >= 0) {
    const float x = g.origin.x + g.margin + static_cast<float>(copy_slot) * g.slot;
    dl->AddRect({x - 1, y - 2}, {x + g.slot, bottom + 1}, kCopyColour, 0, 0, 2.0f);
  }
  // which position each slot holds (differs from the slot once a window rolls)
  const float ly = bottom + 2;
  const float small = fh * 0.75f;
  float last_right = -1e9f;
  for (int64_t s = 0; s < n && s < static_cast<int64_t>(f.slot_positions.size()); ++s) {
    const std::string p = std::to_string(f.slot_positions[static_cast<size_t>(s)]);
    const float x = g.origin.x + g.margin + static_cast<float>(s) * g.slot;
    const float w = ImGui::CalcTextSize(p.c_str()).x * 0.75f;
    if (x < last_right + 3) continue;  // skip a label that would touch the last one
    dl->AddText(ImGui::GetFont(), small, {x, ly}, IM_COL32(170, 170, 170, 255), p.c_str());
    last_right = x + w;
  }
  return ly + small + 2;
}

void meter_bar(ImDrawList* dl, ImVec2 at, float width, float frac, ImU32 colour, const std::string& text) {
  dl->AddRectFilled(at, {at.x + width * frac, at.y + 14}, colour);
  dl->AddRect(at, {at.x + width, at.y + 14}, IM_COL32(110, 110, 110, 255));
  dl->AddText({at.x + width + 8, at.y - 1}, IM_COL32(225, 225, 225, 255), text.c_str());
}

constexpr float kMeterPitch = 19;

float memory_height() { return ImGui::GetFontSize() + 4 + 3 * kMeterPitch; }

float draw_memory(ImDrawList* dl, const Geometry& g, const DecodeRun& run, float y, float width) {
  const MhaConfig& a = run.config.attn;
  CostConfig cc;
  cc.d_model = a.d_model, cc.heads = a.heads, cc.layers = run.config.layers, cc.batch = run.sequences;
  cc.seq = run.config.t_max;
  const int64_t g_now = a.kv_group_count();
  // GQA: this model's g when it is grouped, else h/4 (h/2 for h < 8)
  const int64_t g_mid = g_now > 1 && g_now < a.heads ? g_now : a.heads >= 8 ? a.heads / 4 : std::max<int64_t>(a.heads / 2, 1);
  struct Row { const char* name; int64_t g; };
  const Row rows[] = {{"MHA", a.heads}, {"GQA", g_mid}, {"MQA", 1}};
  cc.kv_heads = a.heads;
  const double full = static_cast<double>(compute_cost(cc).kv_cache_bytes_grouped);
  dl->AddText({g.origin.x, y}, IM_COL32(220, 220, 220, 255), tr("KV cache at T_max, this model"));
  y += ImGui::GetFontSize() + 4;
  for (const Row& r : rows) {
    cc.kv_heads = r.g;
    const int64_t bytes = compute_cost(cc).kv_cache_bytes_grouped;
    const std::string text = std::string(r.name) + "  g=" + std::to_string(r.g) + ": " + human_bytes(bytes);
    meter_bar(dl, {g.origin.x + 8, y}, width * 0.35f, static_cast<float>(bytes / full),
              r.g == g_now ? IM_COL32(250, 200, 60, 255) : IM_COL32(90, 130, 170, 255), text);
    y += kMeterPitch;
  }
  return y;
}

float paged_height(const DecodeRun& run) {
  const float fh = ImGui::GetFontSize();
  return fh + 4 + 34 + static_cast<float>(run.sequences) * (fh + 2) + fh + 4 + kMeterPitch + 16;
}

float draw_paged(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, float y, float width) {
  const int64_t bs = run.config.block_size, blocks = run.slots / bs;
  std::vector<int64_t> owner(static_cast<size_t>(blocks), -1), fill(static_cast<size_t>(blocks), 0);
  std::vector<int64_t> lengths;
  for (size_t s = 0; s < f.tables.size(); ++s) {
    lengths.push_back(f.tables[s].length);
    for (size_t i = 0; i < f.tables[s].blocks.size(); ++i) {
      const int64_t b = f.tables[s].blocks[i];
      owner[static_cast<size_t>(b)] = static_cast<int64_t>(s);
      fill[static_cast<size_t>(b)] = std::min<int64_t>(bs, f.tables[s].length - static_cast<int64_t>(i) * bs);
    }
  }
  dl->AddText({g.origin.x, y}, IM_COL32(220, 220, 220, 255), tr("Block pool (one storage per layer for K, one for V)"));
  y += ImGui::GetFontSize() + 4;
  const float cell = std::min(12.0f, (width - 20) / static_cast<float>(blocks * bs + blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    const float x0 = g.origin.x + 8 + static_cast<float>(b) * (static_cast<float>(bs) * cell + cell);
    for (int64_t c = 0; c < bs; ++c) {
      const ImVec2 a(x0 + static_cast<float>(c) * cell, y), z(a.x + cell - 1, y + 16);
      if (owner[static_cast<size_t>(b)] >= 0 && c < fill[static_cast<size_t>(b)])
        dl->AddRectFilled(a, z, head_colour(owner[static_cast<size_t>(b)] + 3));
      else
        dl->AddRect(a, z, IM_COL32(90, 90, 90, 255));
    }
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize() * 0.75f, {x0, y + 18}, IM_COL32(170, 170, 170, 255),
                std::to_string(b).c_str());
  }
  y += 34;
  for (size_t s = 0; s < f.tables.size(); ++s) {
    std::string text = tr("sequence ") + std::to_string(s) + ": " + std::to_string(f.tables[s].length) + tr(" tokens, block table [");
    for (size_t i = 0; i < f.tables[s].blocks.size(); ++i) text += (i ? ", " : "") + std::to_string(f.tables[s].blocks[i]);
    dl->AddRectFilled({g.origin.x + 8, y + 3}, {g.origin.x + 18, y + 13}, head_colour(static_cast<int64_t>(s) + 3));
    dl->AddText({g.origin.x + 24, y}, IM_COL32(225, 225, 225, 255), (text + "]").c_str());
    y += ImGui::GetFontSize() + 2;
  }
  std::string free_text = tr("free list [");
  for (size_t i = 0; i < f.free_list.size(); ++i) free_text += (i ? ", " : "") + std::to_string(f.free_list[i]);
  dl->AddText({g.origin.x + 8, y}, IM_COL32(225, 225, 225, 255), (free_text + "]").c_str());
  y += ImGui::GetFontSize() + 4;
  CostConfig cc;
  const MhaConfig& a = run.config.attn;
  cc.d_model = a.d_model, cc.heads = a.heads, cc.kv_heads = a.kv_group_count(), cc.layers = run.config.layers;
  const PagedWaste w = paged_waste(cc, lengths, bs, run.config.t_max);
  const float bar = width * 0.35f, most = static_cast<float>(std::max(w.contiguous_bytes, w.paged_bytes));
  meter_bar(dl, {g.origin.x + 8, y}, bar, static_cast<float>(w.contiguous_bytes) / most, IM_COL32(170, 90, 80, 255),
            tr("contiguous, T_max each: ") + human_bytes(w.contiguous_bytes) + tr(", waste ") +
                human_bytes(w.contiguous_bytes - w.used_bytes));
  y += kMeterPitch;
  meter_bar(dl, {g.origin.x + 8, y}, bar, static_cast<float>(w.paged_bytes) / most, IM_COL32(90, 160, 110, 255),
            tr("paged: ") + human_bytes(w.paged_bytes) + tr(", waste ") + human_bytes(w.paged_bytes - w.used_bytes));
  return y + 16;
}

// Mean of v over positions from `first` on (the positions some policy evicted for).
double mean_from(const std::vector<double>& v, size_t first) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = first; i < v.size(); ++i) sum += v[i], ++n;
  return n ? sum / static_cast<double>(n) : 0.0;
}

constexpr float kPlotMin = 44;

float plot_height() { return ImGui::GetFontSize() + 4 + kPlotMin + 6; }

// The by-position plot's lines: random weights, each position's output drift from the full
// cache, for the policy and a plain window of the same size; trained weights, each position's
// loss of the next token with the full cache, the policy and the window (what StreamingLLM
// measures).
struct Series {
  const std::vector<double>* values;
  ImU32 colour;
  std::string name;
};

std::vector<Series> by_position_series(const DecodeRun& run) {
  const bool loss = !run.loss_full.empty();
  std::vector<Series> series;
  if (loss) series.push_back({&run.loss_full, IM_COL32(170, 170, 170, 255), tr("full")});
  if (run.window_text != run.config.policy.text())  // a plain window policy is its own comparison
    series.push_back({loss ? &run.loss_window : &run.drift_window, IM_COL32(220, 110, 90, 255), run.window_text});
  series.push_back({loss ? &run.loss_policy : &run.drift_policy, IM_COL32(90, 200, 240, 255), run.config.policy.text()});
  return series;
}

const char* by_position_title(const DecodeRun& run) {
  return !run.loss_full.empty() ? tr("Loss of the next token by position (trained weights, nats)")
                                : tr("Output drift from the full cache, by position (random weights)");
}

// Lines of the legend: one per series, and with losses the position the means start from.
int legend_lines(const DecodeRun& run) {
  return static_cast<int>(by_position_series(run).size()) + (run.loss_full.empty() ? 0 : 1);
}

// Beside the strips: the title wraps to the column, the legend goes under the plot.
float beside_title_height(const DecodeRun& run, float width) {
  return ImGui::CalcTextSize(by_position_title(run), nullptr, false, width).y;
}

float beside_min_height(const DecodeRun& run, float width) {
  return beside_title_height(run, width) + 4 + kPlotMin + 4 + static_cast<float>(legend_lines(run)) * (ImGui::GetFontSize() + 2);
}

// The plot in `box` (x0, y0, x1, y1). Beside the strips (g.plot_x > 0): title wrapped to the
// box, the plot, the legend under it. Below the alpha rows: the title, then the plot over 55%
// of the panel's width with the legend to its right.
float draw_by_position(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, ImVec4 box) {
  const size_t shown = f.tokens.size();
  const bool loss = !run.loss_full.empty(), beside = g.plot_x > 0;
  const float fh = ImGui::GetFontSize();
  const char* title = by_position_title(run);
  const std::vector<Series> series = by_position_series(run);
  double top = 1e-9;
  for (const Series& s : series)
    for (double v : *s.values) top = std::max(top, v);
  char top_text[32];
  std::snprintf(top_text, sizeof top_text, "%.3f", top);
  ImVec2 p0, p1, legend;
  if (beside) {
    const float w = box.z - box.x;
    dl->AddText(ImGui::GetFont(), fh, {box.x, box.y}, IM_COL32(220, 220, 220, 255), title, nullptr, w);
    p0 = {box.x + ImGui::CalcTextSize(top_text).x + 6, box.y + beside_title_height(run, w) + 4};
    p1 = {box.z - 4, box.w - static_cast<float>(legend_lines(run)) * (fh + 2) - 4};
    legend = {p0.x, p1.y + 4};
    dl->AddText({box.x, p0.y}, IM_COL32(170, 170, 170, 255), top_text);
  } else {
    dl->AddText({box.x, box.y}, IM_COL32(220, 220, 220, 255), title);
    p0 = {box.x + g.margin, box.y + fh + 4};
    p1 = {p0.x + g.width * 0.55f, box.w};
    legend = {p1.x + 8, p0.y};
    dl->AddText({box.x + 4, p0.y}, IM_COL32(170, 170, 170, 255), top_text);
  }
  dl->AddRect(p0, p1, IM_COL32(110, 110, 110, 255));
  const float n = static_cast<float>(std::max<size_t>(run.drift_policy.size(), 2) - 1);
  for (const Series& s : series) {
    const std::vector<double>& d = *s.values;
    for (size_t i = 1; i < std::min(d.size(), shown); ++i) {
      const auto pt = [&](size_t k) {
        return ImVec2(p0.x + (p1.x - p0.x) * static_cast<float>(k) / n,
                      p1.y - (p1.y - p0.y) * static_cast<float>(d[k] / top));
      };
      dl->AddLine(pt(i - 1), pt(i), s.colour, 2.0f);
    }
  }
  const float sx = p0.x + (p1.x - p0.x) * static_cast<float>(run.slots) / n;  // eviction starts
  dl->AddLine({sx, p0.y}, {sx, p1.y}, IM_COL32(160, 160, 160, 160), 1.0f);
  // legend, newest line on top; with losses, each one's mean from the first eviction on
  float ly = legend.y;
  for (auto it = series.rbegin(); it != series.rend(); ++it) {
    std::string text = it->name;
    if (loss) {
      char mean[48];
      std::snprintf(mean, sizeof mean, "  %.2f", mean_from(*it->values, static_cast<size_t>(run.slots)));
      text += mean;
    }
    dl->AddText({legend.x, ly}, it->colour, text.c_str());
    ly += fh + 2;
  }
  if (loss)
    dl->AddText({legend.x, ly}, IM_COL32(170, 170, 170, 255),
                trf("(mean from position %lld)", static_cast<long long>(run.slots)).c_str());
  return beside ? box.w : p1.y + 6;
}

// [SECTION] layout

// Height below the alpha rows: the meters, the paged view or the by-position plot (none when
// the plot sits beside the strips).
float bottom_height(const Geometry& g, const DecodeRun& run) {
  if (run.config.block_size > 0) return paged_height(run);
  if (!run.drift_policy.empty()) return g.plot_x > 0 ? 0.0f : plot_height();
  return memory_height();
}

float tokens_height(const Geometry& g) { return g.cell + 4 + 8; }

float alpha_height(const Geometry& g, const DecodeRun& run) {
  const float fh = ImGui::GetFontSize();
  return fh + 2 + static_cast<float>(run.config.attn.heads) * (g.alpha_row + 1) + 2 + fh * 0.75f + 2;
}

float cache_height(const Geometry& g, const DecodeRun& run) {
  return static_cast<float>(run.config.attn.kv_group_count()) * bands(g, run.config.attn).band + ImGui::GetFontSize() + 4;
}

// The largest strip rows (8 px down to half a pixel, then without query-head labels) at which
// the tokens, the K/V strips, alpha and the bottom part fit in `height` (the smallest when
// none does: the panel then scrolls). Under a pixel a strip texel is the mean of the
// components it covers (strip_rows()).
void fit_rows(Geometry& g, const DecodeRun& run, float height) {
  const bool paged = run.config.block_size > 0;
  // alpha is what the learner reads: about 80 px of rows whatever h is (6 px in the paged view,
  // which also draws the pool)
  g.alpha_row = paged ? 6.0f : std::clamp(80.0f / static_cast<float>(run.config.attn.heads), 6.0f, 12.0f);
  for (const bool labels : {true, false}) {
    g.q_lines = labels && !paged;
    for (float row = 8.0f; row >= 0.5f; row -= row > 1.0f ? 0.5f : 0.125f) {
      g.row = row;
      const float need = tokens_height(g) + cache_height(g, run) + 4 + alpha_height(g, run) + 6 + bottom_height(g, run);
      if (need <= height) return;
    }
  }
}

}  // namespace

// [SECTION] the panel

bool decode_playing(const App& app) { return app.decode && (app.decode->play.playing || app.decode->play.animating()); }

int decode_frame_count(App& app) { return static_cast<int>(state(app).run.frames.size()); }

void set_decode_frame(App& app, int frame, float t) {
  DecodePanelState& s = state(app);
  if (s.run.frames.empty()) return;
  frame = std::clamp(frame, 0, static_cast<int>(s.run.frames.size()) - 1);
  scrub(s.play, std::max(frame - 1, 0), frame, frame == 0 ? 1.0f : t);
  s.play.paused = t < 1.0f;
}

void decode_play(App& app, bool loop) {
  DecodePanelState& s = state(app);
  s.play.playing = true;
  s.play.loop = loop;
}

void panel_decode(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "decode", tr("Decode"), rect)) return end_panel();
  DecodePanelState& s = state(app);
  if (s.run.frames.empty()) {
    ImGui::TextWrapped("%s", s.error.empty() ? tr("Not a decode scenario") : s.error.c_str());
    return end_panel();
  }
  advance(s.play, all_active(s), app.frame_dt);
  const int last = static_cast<int>(s.run.frames.size()) - 1;
  // transport
  if (ImGui::Button("|<")) go_to(s.play, 0, false);
  ImGui::SameLine();
  if (ImGui::Button("<")) go_to(s.play, std::max(s.play.step - 1, 0), false);
  ImGui::SameLine();
  if (ImGui::Button(s.play.playing ? tr("Pause") : tr("Play"))) {
    if (!s.play.playing && s.play.step == last) go_to(s.play, 0, false);
    s.play.playing = !s.play.playing;
  }
  ImGui::SameLine();
  if (ImGui::Button(">")) go_to(s.play, std::min(s.play.step + 1, last));
  ImGui::SameLine();
  if (ImGui::Button(">|")) go_to(s.play, last, false);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::min(220.0f, rect.z * 0.3f));
  int frame = s.play.step;
  if (ImGui::SliderInt("##frame", &frame, 0, last, tr("step %d"))) go_to(s.play, frame, false);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  const int layers = static_cast<int>(s.run.config.layers);
  ImGui::SliderInt("##layer", &s.layer, 0, layers - 1, tr("layer %d"));
  const bool sinks = s.run.config.block_size == 0 && app.session.scenario().decode.policy != "full";
  if (sinks) {
    ImGui::SameLine();
    const std::string preset = app.session.scenario().decode.policy;
    const CachePolicy p = parse_cache_policy(preset);
    const std::string window = "window=" + std::to_string(p.slots(s.run.config.t_max));
    const char* items[] = {"full", window.c_str(), preset.c_str()};
    int current = s.policy == "full" ? 0 : s.policy == window ? 1 : 2;
    ImGui::SetNextItemWidth(150);
    if (ImGui::Combo("##policy", &current, items, 3)) s.policy = items[current];
  }

  const DecodeFrame& f = s.run.frames[static_cast<size_t>(s.play.step)];
  const float t = s.play.animating() ? s.play.t : 1.0f;
  const MhaConfig& a = s.run.config.attn;
  const int64_t G = a.kv_group_count();
  char line[320];
  std::snprintf(line, sizeof line, "%s %d/%d · %s %lld%s · d=%lld h=%lld g=%lld (%s) · %s %s · %s",
                tr("step"), s.play.step, last, tr("position"), static_cast<long long>(f.first_position),
                f.rows > 1 ? (" (" + std::to_string(f.rows) + tr(" rows: prefill") + ")").c_str() : "",
                static_cast<long long>(a.d_model), static_cast<long long>(a.heads), static_cast<long long>(G),
                G == a.heads ? "MHA" : G == 1 ? "MQA" : "GQA", tr("cache"), s.run.config.policy.text().c_str(),
                (tr("used ") + human_bytes(f.used_bytes) + " / " + human_bytes(s.run.storage_bytes)).c_str());
  ImGui::TextWrapped("%s", line);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  Geometry g;
  g.origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  g.width = width;
  g.margin = 44;
  const int64_t columns = s.run.config.t_max + 1;  // every position and the next token
  g.cell = std::clamp((width - g.margin - 200) / static_cast<float>(columns), 6.0f, 22.0f);
  // A rolling window holds fewer slots than positions: its slots get their own, wider columns.
  const bool rolling = s.run.config.block_size == 0 && s.run.slots < s.run.config.t_max;
  g.slot = rolling ? std::clamp((width - g.margin - 120) / static_cast<float>(s.run.slots), 6.0f, 22.0f) : g.cell;
  // Everything below is sized to what is left of the panel (minus the window's bottom padding).
  const float avail_h = ImGui::GetContentRegionAvail().y - ImGui::GetStyle().WindowPadding.y;
  // The by-position plot goes right of the query heads (cache columns, 40 px of broadcast
  // lines, 34 px of query boxes) where that leaves it kBesideWidth and the strips' height.
  constexpr float kBesideWidth = 200;
  const bool plot = s.run.config.block_size == 0 && !s.run.drift_policy.empty();
  const float beside_x = g.origin.x + g.margin + static_cast<float>(s.run.slots) * g.slot + 40 + 34 + 24;
  g.plot_x = plot && g.origin.x + width - beside_x >= kBesideWidth ? beside_x : 0.0f;
  fit_rows(g, s.run, avail_h);
  const float strips_h = static_cast<float>(G) * bands(g, a).band;
  if (g.plot_x > 0 && strips_h < beside_min_height(s.run, g.origin.x + width - g.plot_x)) {
    g.plot_x = 0;  // too short beside the strips: below the alpha rows
    fit_rows(g, s.run, avail_h);
  }
  float y = g.origin.y;
  draw_tokens(dl, g, s.run, f, y, s.run.config.policy.kind != PolicyKind::Full);
  y += tokens_height(g);
  // (x, y, w, h) of the strips and the plot, for --geometry (tests: the plot fits beside them)
  if (s.run.config.block_size == 0)
    app.figure_rects["decode_strips"] = {g.origin.x + g.margin, y, static_cast<float>(s.run.slots) * g.slot, strips_h};
  if (g.plot_x > 0) {
    const ImVec4 box{g.plot_x, y, g.origin.x + width, y + strips_h};
    draw_by_position(dl, g, s.run, f, box);
    app.figure_rects["decode_plot"] = {box.x, box.y, box.z - box.x, box.w - box.y};
  }
  y = draw_cache(dl, g, s.run, f, strip_image(s, s.play.step, s.layer, strip_rows(g, a.head_dim())), s.layer, t, y);
  y = draw_alpha(dl, g, s.run, f, s.layer, y + 4);
  if (s.run.config.block_size > 0)
    y = draw_paged(dl, g, s.run, f, y + 6, width);
  else if (plot && g.plot_x == 0) {
    const ImVec4 box{g.origin.x, y + 6, g.origin.x + width,
                     y + 6 + ImGui::GetFontSize() + 4 + std::max(kPlotMin, g.origin.y + avail_h - y - 6 - plot_height() + kPlotMin)};
    y = draw_by_position(dl, g, s.run, f, box);
    app.figure_rects["decode_plot"] = {box.x, box.y, box.z - box.x, box.w - box.y};
  } else if (!plot)
    y = draw_memory(dl, g, s.run, y + 6, width);
  ImGui::Dummy({width, std::max(0.0f, y - g.origin.y)});
  app.decode_overflow = y - (ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y);
  end_panel();
}

}  // namespace attnsim::app
