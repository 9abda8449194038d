// Flash panel: FlashAttention's tiled online softmax on one (batch, head), tile by tile.
// The picture is one figure (flash_view.h): the slide's tile grid with the running m and l per
// row (figure/flash_figure.h, the very builder `--export --slide --panel flash` uses) and the
// output rows so far beside the exact output, drawn through the ImGui sink (figure_imgui.h).
// Around it, ImGui widgets only: Br, Bc, head and batch sliders, the transport (step by tile
// or by query block, play), and hover details read back through the figure's own geometry.
// Numbers come from the engine's tile trace (flash_attention_core with record_tiles).
//
// Index
//   [SECTION] state and recompute   the tile trace of one (batch, head) at Br x Bc
//   [SECTION] transport and hover   stepping; what the pointer is over in the figure
//   [SECTION] the panel             widgets, the figure, the note
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "app/figure_imgui.h"
#include "views/flash_measure.h"
#include "views/flash_slides.h"
#include "views/flash_view.h"
#include "views/i18n.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/flash.h"
#include "figure/flash_figure.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

// Figure units across the panel at least: room for the tile grid, the m / l columns with
// "before → after" at 28 units, and the output rows (flash_view.h).
constexpr float kFlashFigureWidth = 1700;

// [SECTION] state and recompute

struct FlashPanelState {
  // what the trace below was computed for
  uint64_t generation = 0;
  int64_t batch = -1, head = 0, block_q = 4, block_k = 4;
  FlashCoreResult core;
  std::string error;
  int event = 0;          // index into core.events
  bool playing = false;
  float clock = 0;
  int64_t head_wanted = 0, bq_wanted = 4, bk_wanted = 4;
  // The figure at `view_key` (trace, event, size, language, theme): rebuilt when one changes.
  std::string view_key;
  FlashView view;
  FlashMeasurement measure;  // "Measure on this machine"
  bool measure_open = false; // the lesson's action opens the section
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
  f.view_key.clear();
  f.error.clear();
  f.core = {};
  try {
    // The same call as the flash slides (flash_slides.h): one trace, two views of it.
    f.core = flash_tile_trace(*d, f.batch, f.head, f.block_q, f.block_k);
  } catch (const Error& e) {
    f.error = e.what();
  }
}

// [SECTION] transport and hover

void transport(FlashPanelState& f, int n) {
  auto& ev = f.core.events;
  if (ImGui::ArrowButton("##fprev", ImGuiDir_Left)) f.event = std::max(0, f.event - 1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##fnext", ImGuiDir_Right)) f.event = std::min(n - 1, f.event + 1);
  ImGui::SameLine();
  if (ImGui::Button(tr("query block >>"))) {
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
  ImGui::SliderInt("##event", &f.event, 0, n - 1, tr("event %d"));
}

// The heatmap item drawn at `r` (the figure's own record of its cells), or nullptr.
const fig::Heatmap* heatmap_at(const fig::Figure& f, const fig::Rect& r) {
  for (const fig::Item& i : f.items)
    if (const auto* h = std::get_if<fig::Heatmap>(&i); h && h->rect.x == r.x && h->rect.y == r.y) return h;
  return nullptr;
}

// (row, col) of the cell of `r` (rows x cols) under figure point (x, y), or false.
bool cell_at(const fig::Rect& r, int64_t rows, int64_t cols, float x, float y, int64_t* row, int64_t* col) {
  if (x < r.x || y < r.y || x >= r.right() || y >= r.bottom() || rows < 1 || cols < 1) return false;
  *row = std::min(rows - 1, static_cast<int64_t>((y - r.y) / r.h * static_cast<float>(rows)));
  *col = std::min(cols - 1, static_cast<int64_t>((x - r.x) / r.w * static_cast<float>(cols)));
  return true;
}

// What the pointer is over, at figure point (x, y): a score cell of the grid (its tile's state)
// or an output cell (so far against exact).
void hover_tooltip(const RunData& d, const FlashPanelState& f, float x, float y) {
  const FlashView& v = f.view;
  const int64_t tq = d.config.tq, tk = d.config.tk, dk = d.config.head_dim();
  const auto& ev = f.core.events;
  int64_t r = 0, c = 0;
  auto token = [&](const std::vector<std::vector<std::string>>& t, int64_t i) {
    return f.batch < static_cast<int64_t>(t.size()) && i < static_cast<int64_t>(t[static_cast<size_t>(f.batch)].size())
               ? t[static_cast<size_t>(f.batch)][static_cast<size_t>(i)]
               : std::string();
  };
  if (cell_at(v.tiles.grid, tq, tk, x, y, &r, &c)) {
    const int64_t qb = r / f.block_q, kb = c / f.block_k;
    const size_t at = fig::flash_event_of_tile(ev, qb, kb);
    const bool skipped = at < ev.size() && ev[at].kind == FlashEventKind::Skipped;
    const bool seen = at < ev.size() && !skipped && at <= static_cast<size_t>(f.event);
    std::string what = skipped ? tr("skipped: every score is hidden") : tr("not reached yet");
    if (seen)
      if (const fig::Heatmap* h = heatmap_at(v.figure, v.tiles.grid))
        what = "S = " + fig::flash_number(h->values[static_cast<size_t>(r * tk + c)]);
    ImGui::SetTooltip("%s %lld (%s) · %s %lld (%s)\n%s (%lld, %lld)\n%s", tr("query"), static_cast<long long>(r),
                      token(d.q_tokens, r).c_str(), tr("key"), static_cast<long long>(c), token(d.k_tokens, c).c_str(),
                      tr("tile"), static_cast<long long>(qb), static_cast<long long>(kb), what.c_str());
    return;
  }
  for (size_t k = 0; k < v.outputs.size(); ++k)
    if (cell_at(v.outputs[k], tq, dk, x, y, &r, &c)) {
      const size_t i = static_cast<size_t>(r * dk + c);
      const std::string now = v.reached[static_cast<size_t>(r)] ? fig::flash_number(v.now[i]) : tr("not reached yet");
      ImGui::SetTooltip("%s %lld (%s), %lld\nO/l %s · %s %s", tr("query"), static_cast<long long>(r),
                        token(d.q_tokens, r).c_str(), static_cast<long long>(c), now.c_str(), tr("exact"),
                        fig::flash_number(v.exact[i]).c_str());
      return;
    }
}

}  // namespace

// [SECTION] measure on this machine

namespace {

void start_measure(App& app, FlashPanelState& f) {
  const RunData* d = app.data();
  if (!d) return;
  const MhaConfig& c = d->config;
  f.measure.start(measure_spec(c.batch, c.heads, c.d_model, c.bias, c.seed, c.tq));
  f.measure_open = true;
}

// The button, the progress, the table (T, blocks, both times and their ratio, the IO model's
// bytes of both paths and their ratio, what the standard trace held in S and P) and what the
// figures are on a CPU.
void measure_section(App& app, FlashPanelState& f) {
  if (f.measure_open) ImGui::SetNextItemOpen(true);
  f.measure_open = false;
  if (!ImGui::CollapsingHeader(tr("Measure on this machine"))) return;
  const MeasureSnapshot m = f.measure.snapshot();
  if (m.running) {
    ImGui::ProgressBar(m.total ? static_cast<float>(m.done) / static_cast<float>(m.total) : 0.0f, {240, 0});
    ImGui::SameLine();
    ImGui::TextUnformatted(trf("%lld of %lld passes", static_cast<long long>(m.done), static_cast<long long>(m.total)).c_str());
  } else if (ImGui::Button(tr("Measure standard vs tiled"))) {
    start_measure(app, f);
  }
  if (!m.error.empty()) ImGui::TextColored({1, 0.45f, 0.4f, 1}, "%s", m.error.c_str());
  if (!m.rows.empty() &&
      ImGui::BeginTable("##flash-measure", 9, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    for (const char* h : {"T", "Br x Bc", tr("standard ms"), tr("tiled ms"), tr("std / tiled"), tr("IO bytes, standard"),
                          tr("IO bytes, tiled"), tr("IO ratio"), tr("S, P held")})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const FlashBenchRow& r : m.rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(r.t));
      ImGui::TableNextColumn();
      if (!r.refused.empty()) {
        ImGui::TextColored({1, 0.45f, 0.4f, 1}, "%s", r.refused.c_str());
        continue;
      }
      ImGui::Text("%lld x %lld", static_cast<long long>(r.shape.block_q), static_cast<long long>(r.shape.block_k));
      const bool timed = !r.standard_seconds.empty() && !r.tiled_seconds.empty();
      ImGui::TableNextColumn();
      if (!r.standard_seconds.empty()) ImGui::Text("%.3f", 1e3 * r.standard_median());
      ImGui::TableNextColumn();
      if (!r.tiled_seconds.empty()) ImGui::Text("%.3f", 1e3 * r.tiled_median());
      ImGui::TableNextColumn();
      if (timed) ImGui::Text("%.2f", r.standard_median() / r.tiled_median());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(human_bytes(r.standard_io_bytes()).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(human_bytes(r.tiled_io_bytes()).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", static_cast<double>(r.standard_io_bytes()) / static_cast<double>(r.tiled_io_bytes()));
      ImGui::TableNextColumn();
      if (r.score_bytes >= 0) ImGui::TextUnformatted(human_bytes(r.score_bytes).c_str());
    }
    ImGui::EndTable();
  }
  const int64_t l2 = flash_l2_bytes();
  const std::string cache = l2 > 0 ? trf("this core's L2 cache, %s (sysconf)", human_bytes(l2).c_str())
                                   : std::string(tr("an L2 cache of 1 MiB (the size is unknown here)"));
  ImGui::TextWrapped("%s", trf("No mask, medians of %d runs of each path, interleaved. The tiles were sized for %s: on a CPU the fast memory is the L1/L2 cache and the slow memory is RAM, not a GPU's SRAM and HBM, and the standard path's products run in a tuned BLAS, so the time ratio here need not follow the IO model's ratio of bytes.", kMeasureRuns, cache.c_str()).c_str());
}

}  // namespace

void start_flash_measurement(App& app) {
  if (!app.flash) app.flash = std::make_shared<FlashPanelState>();
  start_measure(app, *app.flash);
}

void wait_flash_measurement(App& app) {
  if (app.flash) app.flash->measure.wait();
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
  ImGui::SliderInt(tr("Br (query block)"), &bq, 1, static_cast<int>(c.tq));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::SliderInt(tr("Bc (key block)"), &bk, 1, static_cast<int>(c.tk));
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

  // What the figure does not draw (its heading names the block and tile): memory the trace
  // holds and the tiled core's bytes.
  const FlashStats& st = f.core.stats;
  ImGui::Text("%s %s  ·  %s %s %s %s S+P %s", tr("held by the trace"), human_bytes(e.held_bytes).c_str(), tr("memory"),
              tr("tiled"), human_bytes(st.core_bytes).c_str(), tr("standard"),
              human_bytes(st.standard_core_bytes).c_str());
  measure_section(app, f);

  // The figure takes the room the note below leaves it, at the scale that makes its 28-unit
  // labels the UI's text size, smaller when the panel is too narrow for the figure's columns.
  // (One literal, so the i18n test finds it and its Korean entry.)
  const char* note = tr("Same multiplications as the standard path; the (Tq, Tk) matrices S and P are never stored: each tile's scores live in fast memory only. The tiled sum adds exp(s - m) in tile order and divides once at the end, so it matches the standard output to rounding, not bit for bit; a fully hidden row ends with l = 0 and gives NaN, as softmax does.");
  const ImVec2 room = ImGui::GetContentRegionAvail();
  const float note_h = ImGui::CalcTextSize(note, nullptr, false, room.x).y + ImGui::GetStyle().ItemSpacing.y * 2;
  const float fig_h = std::max(ImGui::GetTextLineHeight() * 8, room.y - note_h);
  const float fit = std::max(0.2f, std::min(ImGui::GetFontSize() / fig::kLabelMin, room.x / kFlashFigureWidth));
  const lessons::Lang lang = panel_lang();
  const std::string key = std::to_string(f.generation) + "|" + std::to_string(f.batch) + "|" + std::to_string(f.head) +
                          "|" + std::to_string(f.block_q) + "x" + std::to_string(f.block_k) + "|" +
                          std::to_string(f.event) + "|" + std::to_string(static_cast<int>(room.x)) + "x" +
                          std::to_string(static_cast<int>(fig_h)) + "|" + panel_theme().name + (lang == lessons::Lang::Ko ? "|ko" : "|en");
  if (f.view_key != key) {
    FlashViewSpec spec;
    spec.run = d;
    spec.core = &f.core;
    spec.batch = f.batch;
    spec.head = f.head;
    spec.block_q = f.block_q;
    spec.block_k = f.block_k;
    spec.event = static_cast<size_t>(f.event);
    spec.width = room.x / fit;
    spec.height = fig_h / fit;
    spec.lang = lang;
    spec.theme = panel_theme().name;
    try {
      f.view = flash_view(spec);
      want_figure_glyphs(f.view.figure);
    } catch (const Error& err) {
      f.error = err.what();
      return end_panel();
    }
    f.view_key = key;
  }
  // A narrow panel: drawn readable, and the panel scrolls (figure_imgui.h).
  const float scale = readable_scale(f.view.figure, fit);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_figure(ImGui::GetWindowDrawList(), f.view.figure, origin, scale, Backdrop::Window);
  const fig::Rect& g = f.view.tiles.grid;
  app.figure_rects["flash_grid"] = {origin.x + g.x * scale, origin.y + g.y * scale, g.w * scale, g.h * scale};
  ImGui::InvisibleButton("##flash-figure", {std::max(room.x, f.view.figure.width * scale), std::max(fig_h, f.view.figure.height * scale)});
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    hover_tooltip(*d, f, (m.x - origin.x) / scale, (m.y - origin.y) / scale);
  }
  ImGui::TextWrapped("%s", note);
  end_panel();
}

}  // namespace attnsim::app
