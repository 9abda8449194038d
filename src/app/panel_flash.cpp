// Flash panel: FlashAttention's tiled online softmax on one (batch, head), tile by tile.
//   - the whole score matrix as a grid of Br x Bc tiles: tiles seen so far show their scores,
//     tiles not reached yet are grey, the current tile is lit, wholly hidden tiles are
//     crossed out as skipped
//   - per query row, the running max m and running sum l as bars; when a tile raises the
//     max, the old bar stays as a ghost and the rescale factor exp(m_old - m_new) is shown
//   - the output rows so far (O_i / l) beside the exact output of the standard path, with
//     the largest difference per row: they converge as the key blocks go by
//   - fast/slow memory: bytes held now, tiled vs standard; slow-memory traffic so far
//   - step by tile or by query block, or play; Br and Bc adjustable live
// Numbers come from the engine's tile trace (flash_attention_core with record_tiles).
//
// Index
//   [SECTION] state and recompute   the tile trace of one (batch, head) at Br x Bc
//   [SECTION] transport and bars    stepping, m / l per row, the tile overlay
//   [SECTION] the panel             figures, the tile grid, output rows vs exact
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "app/flash_slides.h"
#include "app/heat_view.h"
#include "app/i18n.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/flash.h"

namespace attnsim::app {

// [SECTION] state and recompute

enum class TileState : uint8_t { Pending, Seen, Skipped };

struct FlashPanelState {
  // what the trace below was computed for
  uint64_t generation = 0;
  int64_t batch = -1, head = 0, block_q = 4, block_k = 4;
  FlashCoreResult core;
  std::string error;
  int event = 0;          // index into core.events
  bool playing = false;
  float clock = 0;
  ViewState scores_view, out_view, exact_view;
  int64_t head_wanted = 0, bq_wanted = 4, bk_wanted = 4;
  // The panel's pictures at `built_event`: rebuilt when the event changes, not per frame.
  int built_event = -1;
  std::vector<float> seen;   // (Tq, Tk) scores of the tiles visited so far, kEmptyCell elsewhere
  std::vector<TileState> tiles;  // per tile, row-major over (query block, key block)
  std::vector<float> now;    // (Tq, dk) O / l of every query block so far
  std::vector<float> exact;  // (Tq, dk) the standard path's output
  double worst = 0;          // max |now - exact| over the rows so far
};

namespace {

void recompute(App& app, FlashPanelState& f) {
  const RunData* d = app.data();
  f.generation = d->generation;
  f.batch = app.batch;
  f.head = f.head_wanted;
  f.block_q = f.bq_wanted;
  f.block_k = f.bk_wanted;
  f.event = 0;
  f.built_event = -1;
  f.error.clear();
  f.core = {};
  try {
    // The same call as the flash slides (flash_slides.h): one trace, two views of it.
    f.core = flash_tile_trace(*d, f.batch, f.head, f.block_q, f.block_k);
  } catch (const Error& e) {
    f.error = e.what();
  }
}

// [SECTION] transport and bars

// Events of query block `qb` up to and including `upto`, latest first found.
const FlashEvent* latest_for_block(const std::vector<FlashEvent>& ev, int upto, int64_t qb) {
  for (int i = upto; i >= 0; --i)
    if (ev[static_cast<size_t>(i)].q_block == qb && ev[static_cast<size_t>(i)].kind != FlashEventKind::Skipped)
      return &ev[static_cast<size_t>(i)];
  return nullptr;
}

Layout matrix_layout(int64_t rows, int64_t cols) {
  return make_layout(LayoutKind::Matrix, {1, rows, cols}, {rows * cols, cols, 1}, 0, 0);
}

void transport(FlashPanelState& f, int n) {
  auto& ev = f.core.events;
  if (ImGui::ArrowButton("##fprev", ImGuiDir_Left)) f.event = std::max(0, f.event - 1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##fnext", ImGuiDir_Right)) f.event = std::min(n - 1, f.event + 1);
  ImGui::SameLine();
  if (ImGui::Button("query block >>")) {
    // to the Final event of the current query block, or the next block's
    const int64_t qb = ev[static_cast<size_t>(f.event)].q_block;
    int i = f.event + 1;
    while (i < n - 1 && !(ev[static_cast<size_t>(i)].kind == FlashEventKind::Final &&
                          ev[static_cast<size_t>(i)].q_block >= qb))
      ++i;
    f.event = std::min(i, n - 1);
  }
  ImGui::SameLine();
  if (ImGui::Button(f.playing ? tr("Pause") : tr("Play"))) f.playing = !f.playing;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  ImGui::SliderInt("##event", &f.event, 0, n - 1, "event %d");
}

// Bars of m and l per row of the current query block, each with its number; columns
// sized so the numbers always fit the width.
void row_bars(const FlashEvent& e, float width) {
  const bool fin = e.kind == FlashEventKind::Final;
  const Tensor& m_after = fin ? e.m : e.m_after;
  const Tensor& l_after = fin ? e.l : e.l_after;
  float lmax = 1e-6f, mabs = 1e-6f;
  for (int64_t r = 0; r < e.rows; ++r) {
    const float l = l_after.at({r});
    const float m = m_after.at({r});
    if (std::isfinite(l)) lmax = std::max(lmax, l);
    if (std::isfinite(m)) mabs = std::max(mabs, std::abs(m));
  }
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float h = ImGui::GetTextLineHeight();
  const float label_w = ImGui::CalcTextSize("row 000 ").x;
  const float num_w = ImGui::CalcTextSize("-0.000 ").x;
  // row label | m bar, m | l bar, l | rescale
  const float bar_w = std::max(h * 1.5f, (width - label_w - 2 * num_w - ImGui::CalcTextSize("rescale").x) / 2 - 8);
  const float x_m = label_w, x_l = x_m + bar_w + num_w + 8, x_c = x_l + bar_w + num_w + 8;
  const ImVec2 head = ImGui::GetCursorScreenPos();
  ImGui::Dummy({width, h});  // the column names' line
  list->AddText({head.x + x_m, head.y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), "max m");
  list->AddText({head.x + x_l, head.y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), "sum l");
  list->AddText({head.x + x_c, head.y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), "rescale");
  for (int64_t r = 0; r < e.rows; ++r) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float m = m_after.at({r}), l = l_after.at({r});
    const float m0 = fin ? m : e.m_before.at({r}), l0 = fin ? l : e.l_before.at({r});
    const float c = fin ? 1.0f : e.rescale.at({r});
    auto bar = [&](float x0, float v, float scale, ImU32 col) {
      if (!std::isfinite(v)) return;
      const float w = std::clamp(std::abs(v) / scale, 0.0f, 1.0f) * bar_w;
      list->AddRectFilled({p.x + x0, p.y + 2}, {p.x + x0 + w, p.y + h - 2}, col);
    };
    auto number = [&](float x0, const char* fmt, float v, ImU32 col) {
      char buf[32];
      std::snprintf(buf, sizeof buf, fmt, static_cast<double>(v));
      list->AddText({p.x + x0, p.y}, col, std::isinf(v) ? (v < 0 ? "-inf" : "inf") : buf);
    };
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), raised = IM_COL32(255, 170, 40, 255);
    ImGui::Text("row %lld", static_cast<long long>(e.q0 + r));
    // ghost of the value before this tile, then the value after
    bar(x_m, m0, mabs, IM_COL32(120, 120, 120, 120));
    bar(x_m, m, mabs, c < 1.0f ? raised : IM_COL32(90, 170, 250, 255));
    number(x_m + bar_w + 4, "%.3f", m, c < 1.0f ? raised : text);
    bar(x_l, l0, lmax, IM_COL32(120, 120, 120, 120));
    bar(x_l, l, lmax, IM_COL32(120, 210, 120, 255));
    number(x_l + bar_w + 4, "%.3f", l, text);
    if (c < 1.0f) number(x_c, "x%.3g", c, raised);
  }
}

// Over the score grid: tile boundaries, tiles not reached yet, skipped tiles crossed out,
// the lit tile (or the query block being finished).
void tile_overlay(const FlashPanelState& f, const FlashEvent& e, const ImVec4& first_row,
                  int64_t tq, int64_t tk) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  // first_row is (x, y, width, height): a row is one cell high
  const float cell = first_row.w, x0 = first_row.x, y0 = first_row.y;
  auto at = [&](int64_t row, int64_t col) {
    return ImVec2{x0 + static_cast<float>(col) * cell, y0 + static_cast<float>(row) * cell};
  };
  const int64_t kbs = (tk + f.block_k - 1) / f.block_k;
  for (size_t i = 0; i < f.tiles.size(); ++i) {
    const int64_t q0 = static_cast<int64_t>(i) / kbs * f.block_q, k0 = static_cast<int64_t>(i) % kbs * f.block_k;
    const ImVec2 a = at(q0, k0), b = at(std::min(q0 + f.block_q, tq), std::min(k0 + f.block_k, tk));
    if (f.tiles[i] == TileState::Pending) {
      list->AddRectFilled(a, b, IM_COL32(52, 56, 66, 255));
    } else if (f.tiles[i] == TileState::Skipped) {
      list->AddRectFilled(a, b, IM_COL32(24, 24, 28, 255));
      list->AddLine(a, b, IM_COL32(150, 150, 150, 200), 1.5f);
      list->AddLine({a.x, b.y}, {b.x, a.y}, IM_COL32(150, 150, 150, 200), 1.5f);
      const ImVec2 ts = ImGui::CalcTextSize("skip");
      if (ts.x + 6 < b.x - a.x && ts.y + 4 < b.y - a.y) {
        const ImVec2 c{(a.x + b.x - ts.x) * 0.5f, (a.y + b.y - ts.y) * 0.5f};
        list->AddRectFilled({c.x - 3, c.y}, {c.x + ts.x + 3, c.y + ts.y}, IM_COL32(24, 24, 28, 255));
        list->AddText(c, IM_COL32(190, 190, 190, 255), "skip");
      }
    }
    list->AddRect(a, b, IM_COL32(200, 200, 210, 200), 0, 0, 1.5f);
  }
  if (e.kind == FlashEventKind::Final)
    list->AddRect(at(e.q0, 0), at(e.q0 + e.rows, tk), IM_COL32(120, 230, 120, 255), 0, 0, 3);
  else
    list->AddRect(at(e.q0, e.k0), at(e.q0 + e.rows, e.k0 + e.cols),
                  e.kind == FlashEventKind::Skipped ? IM_COL32(200, 200, 200, 255) : IM_COL32(255, 220, 0, 255), 0, 0, 3);
}

}  // namespace

// The tile grid, the output so far and the exact output at the current event.
void build_pictures(const App& app, FlashPanelState& f, int64_t tq, int64_t tk, int64_t dk) {
  const RunData* d = app.data();
  const auto& ev = f.core.events;
  f.built_event = f.event;
  f.seen.assign(static_cast<size_t>(tq * tk), kEmptyCell);
  const int64_t kbs = (tk + f.block_k - 1) / f.block_k;
  f.tiles.assign(static_cast<size_t>((tq + f.block_q - 1) / f.block_q * kbs), TileState::Pending);
  // a wholly hidden tile is known from the mask before the loop reaches it: marked from the start
  for (const FlashEvent& x : ev)
    if (x.kind == FlashEventKind::Skipped)
      f.tiles[static_cast<size_t>(x.q_block * kbs + x.k_block)] = TileState::Skipped;
  for (int i = 0; i <= f.event; ++i) {
    const FlashEvent& x = ev[static_cast<size_t>(i)];
    if (x.kind != FlashEventKind::Tile) continue;
    f.tiles[static_cast<size_t>(x.q_block * kbs + x.k_block)] = TileState::Seen;
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t s = 0; s < x.cols; ++s)
        f.seen[static_cast<size_t>((x.q0 + r) * tk + x.k0 + s)] = x.scores.at({r, s});
  }
  f.now.assign(static_cast<size_t>(tq * dk), kEmptyCell);
  for (int64_t qb = 0; qb * f.block_q < tq; ++qb) {
    const FlashEvent* x = latest_for_block(ev, f.event, qb);
    if (!x) continue;
    for (int64_t r = 0; r < x->rows; ++r) {
      const float l = x->kind == FlashEventKind::Final ? 1.0f : x->l_after.at({r});
      const Tensor& src = x->kind == FlashEventKind::Final ? x->out : x->acc;
      for (int64_t j = 0; j < dk; ++j)
        f.now[static_cast<size_t>((x->q0 + r) * dk + j)] = src.at({r, j}) / l;
    }
  }
  // The exact output: the standard path's ctx_heads; for a bug the tiled path does not
  // reproduce, the correct run beside it.
  const bool use_reference = d->has_reference && d->config.bug != Bug::None && d->config.bug != Bug::NoScale;
  const Step* exact_step = (use_reference ? d->reference.trace : d->run.trace).find("ctx_heads");
  f.exact.assign(static_cast<size_t>(tq * dk), 0.0f);
  f.worst = 0;
  if (exact_step && exact_step->out.defined())
    for (int64_t r = 0; r < tq; ++r)
      for (int64_t j = 0; j < dk; ++j) {
        const float v = exact_step->out.at({app.batch, f.head, r, j});
        f.exact[static_cast<size_t>(r * dk + j)] = v;
        const float o = f.now[static_cast<size_t>(r * dk + j)];
        if (o != kEmptyCell && std::isfinite(o) && std::isfinite(v)) f.worst = std::max(f.worst, std::abs(static_cast<double>(o - v)));
      }
}

// [SECTION] the panel

bool flash_playing(const App& app) { return app.flash && app.flash->playing; }

bool flash_panel_view(const App& app, FlashPanelView* view) {
  if (!app.flash || app.flash->core.events.empty() || !app.flash->error.empty()) return false;
  const FlashPanelState& f = *app.flash;
  *view = {f.generation, f.batch, f.head, f.block_q, f.block_k, f.event};
  return true;
}

void set_flash_progress(App& app, float t) {
  if (!app.flash || app.flash->core.events.empty()) return;
  const auto n = static_cast<float>(app.flash->core.events.size() - 1);
  app.flash->event = static_cast<int>(std::lround(std::clamp(t, 0.0f, 1.0f) * n));
}

void panel_flash(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "flash", "FlashAttention", rect)) return end_panel();
  const RunData* d = app.data();
  if (!d) return end_panel();
  if (!app.flash) app.flash = std::make_shared<FlashPanelState>();
  FlashPanelState& f = *app.flash;
  const MhaConfig& c = d->config;

  // block sizes and head: changing one recomputes the tile trace (small: one head)
  int bq = static_cast<int>(f.bq_wanted), bk = static_cast<int>(f.bk_wanted), hd = static_cast<int>(f.head_wanted);
  ImGui::SetNextItemWidth(110);
  ImGui::SliderInt("Br", &bq, 1, static_cast<int>(c.tq));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::SliderInt("Bc", &bk, 1, static_cast<int>(c.tk));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::SliderInt(tr("head"), &hd, 0, static_cast<int>(c.heads - 1));
  if (c.batch > 1) {
    ImGui::SameLine();
    int b = static_cast<int>(app.batch);
    ImGui::SetNextItemWidth(90);
    if (ImGui::SliderInt(tr("Batch"), &b, 0, static_cast<int>(c.batch - 1))) app.batch = b;
  }
  f.bq_wanted = bq;
  f.bk_wanted = bk;
  f.head_wanted = hd;
  if (f.generation != d->generation || f.batch != app.batch || f.head != f.head_wanted ||
      f.block_q != f.bq_wanted || f.block_k != f.bk_wanted)
    recompute(app, f);
  if (!f.error.empty()) {
    ImGui::TextColored({1, 0.45f, 0.4f, 1}, "%s", f.error.c_str());
    return end_panel();
  }
  auto& ev = f.core.events;
  const int n = static_cast<int>(ev.size());
  if (n == 0) return end_panel();
  if (f.playing) {
    f.clock += ImGui::GetIO().DeltaTime * app.playback.speed;
    if (f.clock > 0.6f) {
      f.clock = 0;
      if (++f.event >= n) { f.event = n - 1; f.playing = false; }
    }
  }
  f.event = std::clamp(f.event, 0, n - 1);
  transport(f, n);
  const FlashEvent& e = ev[static_cast<size_t>(f.event)];

  // figures: memory now, traffic so far
  const FlashStats& st = f.core.stats;
  ImGui::Text("%s (%lld, %lld)  ·  %s %s  ·  fast %s", flash_event_kind_name(e.kind),
              static_cast<long long>(e.q_block), static_cast<long long>(e.k_block),
              tr("held by the trace"), human_bytes(e.held_bytes).c_str(),
              human_bytes(e.fast_bytes).c_str());
  const double std_bytes = static_cast<double>(st.standard_core_bytes);
  const double tiled = static_cast<double>(st.core_bytes);
  ImGui::Text("memory  tiled %s  vs  standard S+P %s", human_bytes(st.core_bytes).c_str(),
              human_bytes(st.standard_core_bytes).c_str());
  ImGui::ProgressBar(static_cast<float>(tiled / std::max(std::max(tiled, std_bytes), 1.0)), {-1, 0}, "tiled");
  const double io = static_cast<double>(e.io.reads + e.io.writes);
  const double io_std = static_cast<double>(e.io_standard.reads + e.io_standard.writes);
  char traffic[128];
  std::snprintf(traffic, sizeof traffic, "slow-memory traffic: tiled %.0f  vs  standard %.0f elements", io, io_std);
  ImGui::ProgressBar(static_cast<float>(io / std::max(std::max(io, io_std), 1.0)), {-1, 0}, traffic);

  // The figures take the height the note below leaves them.
  static const char* kNote =
      "Same multiplications as the standard path; the (Tq, Tk) matrices S and P are never "
      "stored: each tile's scores live in fast memory only. The tiled sum adds exp(s - m) in "
      "tile order and divides once at the end, so it matches the standard output to rounding, "
      "not bit for bit; a fully hidden row ends with l = 0 and gives NaN, as softmax does.";
  const float w = ImGui::GetContentRegionAvail().x;
  // (two item spacings: before the note, and below the figures' row)
  const float note_h = ImGui::CalcTextSize(kNote, nullptr, false, w).y + ImGui::GetStyle().ItemSpacing.y * 2;
  const float title_h = ImGui::GetTextLineHeightWithSpacing();
  const float fig_h = std::max(title_h * 6, ImGui::GetContentRegionAvail().y - note_h);

  // the whole score matrix as Br x Bc tiles, the ones visited so far with their scores
  const int64_t tq = c.tq, tk = c.tk, dk = c.head_dim();
  if (f.built_event != f.event) build_pictures(app, f, tq, tk, dk);
  const std::string key = "flash|" + std::to_string(app.batch) + "|" + std::to_string(f.head) + "|" +
                          std::to_string(f.block_q) + "x" + std::to_string(f.block_k) + "|" +
                          std::to_string(f.event);
  const Display& grid = app.displays.custom(key, d->generation, matrix_layout(tq, tk), f.seen,
                                            ColourMap::Diverging);
  ImGui::BeginGroup();
  ImGui::TextUnformatted("S = Q·K^T·scale, tile by tile");
  HeatViewSpec gs;
  gs.to = &grid;
  gs.id = "flash-grid";
  if (app.batch < static_cast<int64_t>(d->q_tokens.size())) {
    gs.row_labels = &d->q_tokens[static_cast<size_t>(app.batch)];
    gs.col_labels = &d->k_tokens[static_cast<size_t>(app.batch)];
  }
  gs.size = {w * 0.34f, fig_h - title_h};
  const HeatViewResult gr = draw_heat_view(f.scores_view, gs);
  if (!gr.block_rows.empty()) tile_overlay(f, e, gr.block_rows[0], tq, tk);
  ImGui::EndGroup();
  ImGui::SameLine();

  // running max and sum of the current query block
  ImGui::BeginChild("rows", {w * 0.4f, fig_h});
  ImGui::Text("query block %lld: m and l per row", static_cast<long long>(e.q_block));
  if (e.kind == FlashEventKind::Skipped) {
    ImGui::TextWrapped("tile (%lld, %lld) skipped: every score is hidden, nothing is read",
                       static_cast<long long>(e.q_block), static_cast<long long>(e.k_block));
    // a skip changes nothing: the block's bars as the last tile left them
    if (const FlashEvent* last = latest_for_block(ev, f.event, e.q_block)) row_bars(*last, w * 0.4f);
  } else {
    row_bars(e, w * 0.4f);
  }
  ImGui::EndChild();
  ImGui::SameLine();

  // output rows so far beside the exact output, each under its name
  const Display& out_now = app.displays.custom(key + "|out", d->generation, matrix_layout(tq, dk),
                                               f.now, ColourMap::Diverging);
  const Display& out_exact = app.displays.custom("flash-exact|" + std::to_string(app.batch) + "|" + std::to_string(f.head),
                                                 d->generation, matrix_layout(tq, dk), f.exact, ColourMap::Diverging);
  const float out_w = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  // one group: the names over their maps, the difference under both (the texts are wider
  // than one map)
  ImGui::BeginGroup();
  ImGui::TextUnformatted("O/l so far");
  ImGui::SameLine(out_w + ImGui::GetStyle().ItemSpacing.x);  // from the group's left edge
  ImGui::TextUnformatted("exact");
  HeatViewSpec os;
  os.to = &out_now;
  os.id = "flash-out";
  os.size = {out_w, fig_h - title_h * 2};
  draw_heat_view(f.out_view, os);
  ImGui::SameLine();
  HeatViewSpec es = os;
  es.to = &out_exact;
  es.id = "flash-exact";
  draw_heat_view(f.exact_view, es);
  ImGui::Text("max |diff| %.2g", f.worst);
  ImGui::EndGroup();

  ImGui::TextWrapped("%s", kNote);
  end_panel();
}

}  // namespace attnsim::app
