// Decode panel: a decode scenario token by token.
//   - the tokens, appearing one per step (prompt, generated, evicted, the next one)
//   - the cache of one layer: per KV head a strip of its preallocated slots (columns) by d_k
//     (rows); the step's new K row flies from k_heads into its slot (layouts of the real
//     tensors, matched by storage index: layout.h / transition.h)
//   - the query heads, coloured by the group whose K/V head they read; the broadcast lines
//     grow from the K head to its r query heads (the stride-0 k_grouped view)
//   - the step's alpha row per query head over the cached slots
//   - memory meter: this model's cache with MHA, GQA and MQA; paged: the block pool, block
//     tables, free list and waste; sinks: the policy switch and drift-by-position plot
//
// Index
//   [SECTION] state        the run, recomputed when the scenario or the policy changes
//   [SECTION] drawing      tokens, cache strips, broadcast, alpha, meters
//   [SECTION] the panel
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "app/decode_run.h"
#include "app/heat_view.h"
#include "app/i18n.h"
#include "app/layout.h"
#include "app/transition.h"
#include "engine/cost.h"
#include "engine/error.h"

namespace attnsim::app {

// [SECTION] state

struct DecodePanelState {
  std::string computed_for;  // "scenario|policy" the run (or the error) belongs to
  std::string scenario;
  std::string policy;        // the policy switch; empty = the scenario's own
  DecodeRun run;
  std::string error;
  Playback play;
  int layer = 0;
};

namespace {

// The run of the scenario on screen under the chosen policy, computed once per change (an
// error is kept too, so a refused run is not retried every frame).
DecodePanelState& state(App& app) {
  if (!app.decode) app.decode = std::make_shared<DecodePanelState>();
  DecodePanelState& s = *app.decode;
  const Scenario& sc = app.session.scenario();
  if (s.scenario != sc.name) s.policy.clear();  // a new scenario opens on its own policy
  s.scenario = sc.name;
  const std::string policy = s.policy.empty() ? sc.decode.policy : s.policy;
  const std::string key = sc.name + "|" + policy;
  if (s.computed_for != key) {
    s.computed_for = key;
    s.error.clear();
    try {
      s.run = run_decode(sc, policy);
    } catch (const Error& e) {
      s.error = e.what();
      s.run = {};
      app.show_banner(e.what(), true);
    }
    s.play = {};
    s.play.hold = 0.5f;
    s.play.duration = 0.8f;
    s.layer = std::min<int>(s.layer, std::max<int>(static_cast<int>(s.run.config.layers) - 1, 0));
  }
  return s;
}

std::vector<bool> all_active(const DecodePanelState& s) { return std::vector<bool>(s.run.frames.size(), true); }

// [SECTION] drawing

ImU32 diverging(float v, float scale) {  // blue - white - red, v / scale in [-1, 1]
  const float x = std::clamp(v / std::max(scale, 1e-6f), -1.0f, 1.0f);
  const float r = x > 0 ? 1.0f : 1.0f + x, b = x < 0 ? 1.0f : 1.0f - x, g = 1.0f - std::fabs(x);
  return ImGui::GetColorU32(ImVec4(0.15f + 0.80f * r, 0.15f + 0.80f * g, 0.15f + 0.80f * b, 1));
}

ImU32 sequential(float a) {  // alpha in [0, 1]: dark to yellow
  const float x = std::sqrt(std::clamp(a, 0.0f, 1.0f));
  return ImGui::GetColorU32(ImVec4(0.10f + 0.88f * x, 0.10f + 0.78f * x, 0.18f + 0.10f * x, 1));
}

// A token as one visible character ("·" for the space).
std::string token_text(int64_t token) {
  const char c = static_cast<char>(kVocabFirst + token);
  return c == ' ' ? "·" : std::string(1, c);
}

struct Geometry {
  ImVec2 origin;     // top-left of the panel's drawing
  float margin = 0;  // left label column
  float cell = 0;    // one slot / position column
  float row = 0;     // one d_k row of a strip
};

void draw_tokens(ImDrawList* dl, const Geometry& g, const DecodeFrame& f, float y, bool evicting) {
  for (size_t p = 0; p <= f.tokens.size(); ++p) {
    const ImVec2 a(g.origin.x + g.margin + static_cast<float>(p) * g.cell, y);
    const ImVec2 b(a.x + g.cell - 2, a.y + g.cell + 4);
    const bool next = p == f.tokens.size();
    const bool kept = next || !evicting ||
                      std::find(f.slot_positions.begin(), f.slot_positions.end(), static_cast<int64_t>(p)) !=
                          f.slot_positions.end();
    const bool fresh = !next && static_cast<int64_t>(p) >= f.first_position;
    const int64_t tok = next ? f.next : f.tokens[p];
    dl->AddRectFilled(a, b, next ? IM_COL32(40, 40, 40, 255) : kept ? IM_COL32(46, 66, 92, 255) : IM_COL32(50, 50, 50, 255));
    if (fresh) dl->AddRect(a, b, IM_COL32(250, 220, 80, 255), 0, 0, 2);
    if (next) dl->AddRect(a, b, IM_COL32(150, 150, 150, 255));
    const std::string t = token_text(tok);
    dl->AddText({a.x + (g.cell - 2 - ImGui::CalcTextSize(t.c_str()).x) * 0.5f, a.y + 2},
                kept ? IM_COL32(235, 235, 235, 255) : IM_COL32(120, 120, 120, 255), t.c_str());
    if (!kept) dl->AddLine({a.x, b.y}, {b.x, a.y}, IM_COL32(200, 80, 80, 255), 1.5f);
  }
}

// The K strips of one layer, the new row flying into its slot, the broadcast to the query
// heads. Returns the y below the drawing.
float draw_cache(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, int layer,
                 float t, float y) {
  const MhaConfig& a = run.config.attn;
  const int64_t G = a.kv_group_count(), r = a.heads / G, dk = a.head_dim();
  const bool paged = run.config.block_size > 0;
  const int64_t bs = run.config.block_size;
  const Tensor& k = f.k_cache[static_cast<size_t>(layer)];  // (g, t', dk)
  const int64_t filled = k.size(1);
  // Contiguous: every preallocated slot; paged: sequence 0's blocks (nothing is preallocated).
  const int64_t slots = paged ? (filled + bs - 1) / bs * bs : run.slots;
  const int64_t columns = paged ? run.config.t_max : run.slots;  // the query heads stay put
  float scale = 1e-6f;
  for (float v : k.to_vector()) scale = std::max(scale, std::fabs(v));
  const float strip_h = static_cast<float>(dk) * g.row;
  const float gap = std::max(8.0f, g.row * 1.5f);
  const float strip_x = g.origin.x + g.margin;
  // Group j's band holds its strip and its r query heads, one text line each where the
  // labels fit (the paged view is compact: boxes only).
  const float fh = ImGui::GetFontSize();
  const bool q_labels = !paged;
  const float q_pitch = q_labels ? fh + 2 : std::max(3.0f, (strip_h + gap) / static_cast<float>(r));
  const float band = std::max(strip_h + gap, static_cast<float>(r) * q_pitch + (q_labels ? gap : 0));
  auto strip_y = [&](int64_t j) { return y + static_cast<float>(j) * band + (band - gap - strip_h) * 0.5f; };
  const bool flying = t < 1.0f;
  // slots this frame writes: drawn empty until the row lands
  auto landing = [&](int64_t s) {
    return flying && std::find(f.append_slots.begin(), f.append_slots.end(), s) != f.append_slots.end();
  };
  for (int64_t j = 0; j < G; ++j) {
    const float sy = strip_y(j);
    char label[32];
    std::snprintf(label, sizeof label, "K %lld", static_cast<long long>(j));
    dl->AddText({g.origin.x, sy + strip_h * 0.5f - 7}, head_colour(j), label);
    for (int64_t s = 0; s < slots; ++s) {
      const ImVec2 c0(strip_x + static_cast<float>(s) * g.cell, sy);
      const ImVec2 c1(c0.x + g.cell - 1, sy + strip_h);
      if (s >= filled || landing(s)) {
        dl->AddRect(c0, c1, IM_COL32(90, 90, 90, 255));  // preallocated, empty
        continue;
      }
      for (int64_t e = 0; e < dk; ++e)
        dl->AddRectFilled({c0.x, sy + static_cast<float>(e) * g.row}, {c1.x, sy + static_cast<float>(e + 1) * g.row},
                          diverging(k.at({j, s, e}), scale));
    }
    dl->AddRect({strip_x - 1, sy - 1}, {strip_x + static_cast<float>(slots) * g.cell, sy + strip_h + 1},
                head_colour(j, 0.8f));
    if (paged)  // block boundaries
      for (int64_t b = bs; b < slots; b += bs) {
        const float bx = strip_x + static_cast<float>(b) * g.cell - 1;
        dl->AddLine({bx, sy - 4}, {bx, sy + strip_h + 4}, IM_COL32(235, 235, 235, 255), 2.0f);
      }
  }
  // The new rows: each element of k_heads (from its layout) to the storage cell the append
  // view maps it to (the cache storage's layout), eased.
  const Step* kh = f.layer0.find("k_heads");
  const Step* ap = f.layer0.find("k_cache_append");
  if (flying && layer == 0 && kh && ap && kh->out.defined()) {
    const Layout from = make_layout(LayoutKind::Stacked, kh->out, 0);  // (g, n, dk)
    const Dims cache_shape{1, G, run.slots, dk};
    const Layout cache = make_layout(LayoutKind::Stacked, cache_shape, contiguous_strides(cache_shape), 0, 0);
    const Layout dest = paged ? from : make_layout(LayoutKind::Stacked, ap->out, 0);  // views of the storage
    const float new_x = g.origin.x + 4;
    for (int64_t e = 0; e < from.numel(); ++e) {
      const Dims idx = from.index_of(e);  // (j, i, c)
      const int64_t j = idx[0], i = idx[1], c = idx[2];
      int64_t slot = f.append_slots[static_cast<size_t>(i)];
      if (!paged) {
        const int64_t el = cache.element_at_storage(dest.storage[static_cast<size_t>(e)]);
        if (el >= 0) slot = cache.index_of(el)[1];
      }
      const Rect a{new_x + static_cast<float>(i) * g.cell * 0.6f, strip_y(j) + static_cast<float>(c) * g.row, g.cell - 1, g.row};
      const Rect b{strip_x + static_cast<float>(slot) * g.cell, strip_y(j) + static_cast<float>(c) * g.row, g.cell - 1, g.row};
      const Rect m = lerp(a, b, ease(t));
      dl->AddRectFilled({m.x, m.y}, {m.x + m.w, m.y + m.h}, diverging(kh->out.at({0, j, i, c}), scale));
    }
  }
  // Broadcast: K head j feeds query heads j·r .. j·r + r - 1 (the stride-0 k_grouped view).
  const float qx = strip_x + static_cast<float>(columns) * g.cell + 40;
  const float q_h = q_pitch - 2;
  for (int64_t j = 0; j < G; ++j) {
    const ImVec2 src(strip_x + static_cast<float>(slots) * g.cell + 2, strip_y(j) + strip_h * 0.5f);
    const float q_top = strip_y(j) + strip_h * 0.5f - static_cast<float>(r) * q_pitch * 0.5f;
    for (int64_t q = 0; q < r; ++q) {
      const int64_t head = j * r + q;
      const float qy = q_top + static_cast<float>(q) * q_pitch;
      const ImVec2 dst(qx, qy + q_h * 0.5f);
      const float grow = r > 1 ? ease(std::clamp(t * 1.6f - 0.6f * static_cast<float>(q) / static_cast<float>(r), 0.0f, 1.0f)) : 1.0f;
      dl->AddLine(src, {src.x + (dst.x - src.x) * grow, src.y + (dst.y - src.y) * grow}, head_colour(j, 0.9f), 1.5f);
      dl->AddRectFilled({qx, qy}, {qx + 34, qy + q_h}, head_colour(j, 0.85f));
      char label[24];
      std::snprintf(label, sizeof label, "q%lld", static_cast<long long>(head));
      if (q_labels) dl->AddText({qx + 4, qy + (q_h - fh) * 0.5f}, IM_COL32(20, 20, 20, 255), label);
    }
  }
  if (const Step* kg = f.layer0.find("k_grouped"); kg && kg->out.defined()) {
    const std::string s = std::string("k_grouped ") + format_dims(kg->out.shape()) + tr(" strides ") +
                          format_dims(kg->out.strides()) + " · " + tr("no copy");
    dl->AddText({strip_x, y + static_cast<float>(G) * band}, IM_COL32(200, 200, 200, 255), s.c_str());
  }
  return y + static_cast<float>(G) * band + fh + 6;
}

// alpha of the step's last new row, per query head, under the slots it weighs.
float draw_alpha(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, int layer, float y) {
  const Tensor& al = f.alpha[static_cast<size_t>(layer)];  // (h, t')
  const int64_t h = al.size(0), n = al.size(1), r = h / run.config.attn.kv_group_count();
  const float rh = run.config.block_size > 0 ? 6.0f : std::max(5.0f, std::min(12.0f, g.row * 1.5f));
  float top = 1e-6f;  // colours run to the frame's largest weight (1/t' is dark otherwise)
  for (float v : al.to_vector()) top = std::max(top, v);
  dl->AddText({g.origin.x, y}, IM_COL32(220, 220, 220, 255), tr("alpha: the newest row's weights over the slots"));
  y += ImGui::GetFontSize() + 2;
  for (int64_t i = 0; i < h; ++i) {
    const float ry = y + static_cast<float>(i) * (rh + 1);
    dl->AddRectFilled({g.origin.x + g.margin - 10, ry}, {g.origin.x + g.margin - 3, ry + rh}, head_colour(i / r));
    for (int64_t s = 0; s < n; ++s) {
      const float x = g.origin.x + g.margin + static_cast<float>(s) * g.cell;
      dl->AddRectFilled({x, ry}, {x + g.cell - 1, ry + rh}, sequential(al.at({i, s}) / top));
    }
  }
  // which position each slot holds (differs from the slot once a window rolls)
  const float ly = y + static_cast<float>(h) * (rh + 1) + 2;
  for (int64_t s = 0; s < n && s < static_cast<int64_t>(f.slot_positions.size()); ++s) {
    const std::string p = std::to_string(f.slot_positions[static_cast<size_t>(s)]);
    if (g.cell < ImGui::CalcTextSize(p.c_str()).x * 0.75f && s % 2) continue;
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize() * 0.75f,
                {g.origin.x + g.margin + static_cast<float>(s) * g.cell, ly}, IM_COL32(170, 170, 170, 255), p.c_str());
  }
  return ly + ImGui::GetFontSize();
}

void meter_bar(ImDrawList* dl, ImVec2 at, float width, float frac, ImU32 colour, const std::string& text) {
  dl->AddRectFilled(at, {at.x + width * frac, at.y + 14}, colour);
  dl->AddRect(at, {at.x + width, at.y + 14}, IM_COL32(110, 110, 110, 255));
  dl->AddText({at.x + width + 8, at.y - 1}, IM_COL32(225, 225, 225, 255), text.c_str());
}

float draw_memory(ImDrawList* dl, const Geometry& g, const DecodeRun& run, float y, float width) {
  const MhaConfig& a = run.config.attn;
  CostConfig cc;
  cc.d_model = a.d_model, cc.heads = a.heads, cc.layers = run.config.layers, cc.batch = run.sequences;
  cc.seq = run.config.t_max;
  const int64_t g_now = a.kv_group_count();
  const int64_t g_mid = g_now > 1 && g_now < a.heads ? g_now : std::max<int64_t>(a.heads / 4, 1);
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
    y += 20;
  }
  return y;
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
  y += 20;
  meter_bar(dl, {g.origin.x + 8, y}, bar, static_cast<float>(w.paged_bytes) / most, IM_COL32(90, 160, 110, 255),
            tr("paged: ") + human_bytes(w.paged_bytes) + tr(", waste ") + human_bytes(w.paged_bytes - w.used_bytes));
  return y + 22;
}

float draw_drift(ImDrawList* dl, const Geometry& g, const DecodeRun& run, const DecodeFrame& f, float y, float width,
                 float height) {
  const size_t shown = f.tokens.size();
  dl->AddText({g.origin.x, y}, IM_COL32(220, 220, 220, 255),
              tr("Output drift from the full cache, by position (random weights)"));
  y += ImGui::GetFontSize() + 4;
  const ImVec2 p0(g.origin.x + g.margin, y), p1(g.origin.x + g.margin + width * 0.6f, y + height);
  dl->AddRect(p0, p1, IM_COL32(110, 110, 110, 255));
  double top = 1e-9;
  for (double v : run.drift_policy) top = std::max(top, v);
  for (double v : run.drift_window) top = std::max(top, v);
  const float n = static_cast<float>(std::max<size_t>(run.drift_policy.size(), 2) - 1);
  auto line = [&](const std::vector<double>& d, ImU32 colour) {
    for (size_t i = 1; i < std::min(d.size(), shown); ++i) {
      const auto pt = [&](size_t k) {
        return ImVec2(p0.x + (p1.x - p0.x) * static_cast<float>(k) / n,
                      p1.y - (p1.y - p0.y) * static_cast<float>(d[k] / top));
      };
      dl->AddLine(pt(i - 1), pt(i), colour, 2.0f);
    }
  };
  line(run.drift_window, IM_COL32(220, 110, 90, 255));
  line(run.drift_policy, IM_COL32(90, 200, 240, 255));
  const float sx = p0.x + (p1.x - p0.x) * static_cast<float>(run.slots) / n;  // eviction starts
  dl->AddLine({sx, p0.y}, {sx, p1.y}, IM_COL32(160, 160, 160, 160), 1.0f);
  char top_text[32];
  std::snprintf(top_text, sizeof top_text, "%.3f", top);
  dl->AddText({p0.x - g.margin + 4, p0.y}, IM_COL32(170, 170, 170, 255), top_text);
  dl->AddText({p1.x + 8, p0.y}, IM_COL32(90, 200, 240, 255), run.config.policy.text().c_str());
  dl->AddText({p1.x + 8, p0.y + 18}, IM_COL32(220, 110, 90, 255), run.window_text.c_str());
  return p1.y + 6;
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
  char line[256];
  std::snprintf(line, sizeof line, "%s %d/%d · %s %lld%s · d=%lld h=%lld g=%lld (%s) · %s %s · %s",
                tr("step"), s.play.step, last, tr("position"), static_cast<long long>(f.first_position),
                f.rows > 1 ? (" (" + std::to_string(f.rows) + tr(" rows: prefill") + ")").c_str() : "",
                static_cast<long long>(a.d_model), static_cast<long long>(a.heads), static_cast<long long>(G),
                G == a.heads ? "MHA" : G == 1 ? "MQA" : "GQA", tr("cache"), s.run.config.policy.text().c_str(),
                (tr("used ") + human_bytes(f.used_bytes) + " / " + human_bytes(s.run.storage_bytes)).c_str());
  ImGui::TextUnformatted(line);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  Geometry g;
  g.origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  g.margin = 44;
  const int64_t columns = s.run.config.t_max + 1;  // every position and the next token
  g.cell = std::clamp((width - g.margin - 200) / static_cast<float>(columns), 6.0f, 22.0f);
  const float avail_h = ImGui::GetContentRegionAvail().y;
  const float strips_h = avail_h * 0.42f;
  g.row = std::clamp(strips_h / static_cast<float>(G * a.head_dim() + G), 2.0f, 8.0f);
  float y = g.origin.y;
  draw_tokens(dl, g, f, y, s.run.config.policy.kind != PolicyKind::Full);
  y += g.cell + 12;
  y = draw_cache(dl, g, s.run, f, s.layer, t, y);
  y = draw_alpha(dl, g, s.run, f, s.layer, y + 4);
  if (s.run.config.block_size > 0)
    y = draw_paged(dl, g, s.run, f, y + 6, width);
  else if (!s.run.drift_policy.empty())
    y = draw_drift(dl, g, s.run, f, y + 6, width, std::max(40.0f, rect.y + rect.w - y - 40));
  else
    y = draw_memory(dl, g, s.run, y + 6, width);
  ImGui::Dummy({width, std::max(0.0f, y - g.origin.y)});
  end_panel();
}

}  // namespace attnsim::app
