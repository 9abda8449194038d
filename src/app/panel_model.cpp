// Model panel: the trained model's layers x heads grid on the sequence on screen.
//   [SECTION] state      the grid's figure, rebuilt when the model view recomputes
//   [SECTION] header     checkpoint (and its run's saved steps), sequence, generators, ablation
//   [SECTION] decode     continue the sequence: greedy or at a temperature (model/generate.h)
//   [SECTION] numbers    loss and accuracy per part, as trained and with the ablation; a
//                        language model's held-out loss, as trained and knocked out
//   [SECTION] grid       the slide's head grid (model_slides.h head_grid_view: each head's
//                        alpha, its name badge "0.1 first token 0.49 · chance 0.17"
//                        (head_names.h), knocked-out heads crossed) through the ImGui sink;
//                        sentences on hover, click = that layer's trace in the other views,
//                        and an ablate toggle under each cell
//   [SECTION] tokens     the top 5 after the last token; the sequence with the model's top-1
//                        prediction under every token, its top 5 on hover
//   The Sampling and Lens tabs are panel_whole.cpp's, over the view's whole pass.
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/figure_imgui.h"
#include "app/panel_whole.h"
#include "views/head_names.h"
#include "lessons/step_marks.h"
#include "views/i18n.h"
#include "views/model_slides.h"
#include "views/model_view.h"
#include "engine/error.h"
#include "model/training/tasks.h"

namespace attnsim::app {

// [SECTION] state

struct ModelPanelState {
  HeadGridView grid;     // the head grid's figure for the run on screen
  std::string grid_key;  // what it was built for: view, revision, width, theme, language
  char text[1024] = {};  // a language model reads 128 tokens: room for their text
  uint64_t text_revision = 0;
  uint64_t seed = 1;
  int sentence = 0;
  int decode_steps = 16;
  float temperature = 0;  // 0: greedy
  int decode_seed = 1;
  WholeTabsState whole;  // the Sampling and Lens tabs
  std::string open_tab;  // the tab to select on the next frame (export, bench); "" none
  // What a lesson step names (lessons/step_marks.h): the row of a position, framed while the
  // sequence it was found in is on screen; the bar is WholeTabsState::marked_bar.
  std::vector<int32_t> marked_in;
  int64_t marked_row = -1;
  bool tools_open = true;  // the header's generators, knock-out and decode rows are shown
};

int64_t marked_row(const ModelPanelState& s, const ModelView& v) { return s.marked_in == v.tokens() ? s.marked_row : -1; }

void open_model_tab(App& app, const std::string& tab) {
  if (!app.model_panel) app.model_panel = std::make_shared<ModelPanelState>();
  app.model_panel->open_tab = tab;
}

void mark_model(App& app, const std::string& token, const std::string& bar) {
  if (!app.model_panel) app.model_panel = std::make_shared<ModelPanelState>();
  ModelPanelState& s = *app.model_panel;
  s.marked_in.clear();
  s.marked_row = -1;
  s.whole.marked_bar = -1;
  if (!app.model || !app.model->loaded()) return;
  const ModelView& v = *app.model;
  const lessons::TokenText text = lessons::token_text(v.tokenizer());
  if (auto row = lessons::marked_position(v.tokens(), text, token)) {
    s.marked_in = v.tokens();
    s.marked_row = *row;
  }
  if (auto id = lessons::marked_token(v.model().config.vocab, text, bar)) s.whole.marked_bar = *id;
}

namespace {

constexpr ImU32 kRight = IM_COL32(70, 200, 110, 255);
constexpr ImU32 kWrong = IM_COL32(235, 85, 85, 255);
constexpr ImU32 kUnscored = IM_COL32(140, 140, 150, 255);

// Runs an action that may throw; a bad input becomes the banner, the app keeps going.
template <class F>
void guarded(App& app, F&& f) {
  try {
    f();
    show_model_layer(app, app.model_layer);
  } catch (const Error& e) {
    app.show_banner(e.what(), true);
  }
}

// A disabled control's tooltip: why it does nothing on this model.
void disabled_reason(const char* why) {
  if (!ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
  ImGui::TextUnformatted(why);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// "This model has no head scored as induction (best 0.12, head 2.1; needs 0.40)."
std::string no_induction_reason(const ModelView& v) {
  const model::HeadTable& t = v.roles();
  double best = -1;
  model::HeadRef at{0, 0};
  for (int64_t l = 0; l < t.layers; ++l)
    for (int64_t h = 0; h < t.heads; ++h)
      if (t.at(l, h).induction > best) best = t.at(l, h).induction, at = {l, h};
  return trf("This model has no head scored as induction (best %.2f, head %lld.%lld; needs %.2f).", best,
             static_cast<long long>(at.layer), static_cast<long long>(at.head), model::kInductionThreshold);
}

// [SECTION] header

void header(App& app, ModelView& v, ModelPanelState& s) {
  const model::ModelConfig& c = v.model().config;
  // The run's name, as the slides give it (a path tells a classroom where the teacher keeps
  // files); the folder on hover.
  ImGui::TextUnformatted(trf("%s  (step %lld)", checkpoint_name(v.dir()).c_str(), static_cast<long long>(v.step())).c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.dir().c_str());
  // The sizes beside the name where they fit (a 720p projector has no line to spare), else under it.
  const std::string sizes = trf("%lld layers x %lld heads, d_model %lld, vocab %lld, up to %lld tokens",
                                static_cast<long long>(c.layers), static_cast<long long>(c.heads),
                                static_cast<long long>(c.d_model), static_cast<long long>(c.vocab),
                                static_cast<long long>(c.seq_len));
  ImGui::SameLine(0, ImGui::GetFontSize());
  if (ImGui::CalcTextSize(sizes.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
  ImGui::TextDisabled("%s", sizes.c_str());

  // The run's saved checkpoints: the grid and every trace follow the step picked here.
  const std::vector<std::string> saved = v.timeline();
  const std::filesystem::path dir(v.dir());
  if (saved.size() > 1) {
    int at = static_cast<int>(saved.size()) - 1;
    for (size_t i = 0; i < saved.size(); ++i)
      if (std::filesystem::path(saved[i]) == dir) at = static_cast<int>(i);
    const std::string name = std::filesystem::path(saved[static_cast<size_t>(at)]).filename().string();
    const std::string label = name.rfind("step-", 0) == 0 ? name : trf("final (step %lld)", static_cast<long long>(v.step()));
    ImGui::SetNextItemWidth(-90);
    if (ImGui::SliderInt(tr("checkpoint"), &at, 0, static_cast<int>(saved.size()) - 1, label.c_str()))
      guarded(app, [&] { v.load(saved[static_cast<size_t>(at)]); });
  }

  // The sequence: type characters (Enter applies) or pick a generator.
  if (s.text_revision != v.revision()) {
    std::snprintf(s.text, sizeof s.text, "%s", v.text().c_str());
    s.text_revision = v.revision();
  }
  ImGui::SetNextItemWidth(-90);
  if (ImGui::InputText(tr("sequence"), s.text, sizeof s.text, ImGuiInputTextFlags_EnterReturnsTrue))
    guarded(app, [&] { v.set_text(s.text); });
  // The generators, the knock-out shortcuts and decoding fold away, open where the panel has
  // room for them and the views under them (48 lines), closed on a 720p projector.
  ImGui::SetNextItemOpen(ImGui::GetContentRegionAvail().y >= 48 * ImGui::GetFontSize(), ImGuiCond_Once);
  s.tools_open = ImGui::CollapsingHeader(tr("sequence generators, knock-out, decode###model-tools"));
  if (!s.tools_open) return;
  if (ImGui::Button(tr("repeated random"))) guarded(app, [&] {
      const uint64_t seed = ++s.seed;
      // 12..19 tokens: the lengths the shipped model repeats best (its repeat_eval).
      v.repeated_random(std::min<int64_t>(12 + static_cast<int64_t>(seed % 8), (c.seq_len - 1) / 2), seed);
    });
  ImGui::SameLine();
  if (ImGui::Button(v.text_model() ? tr("held-out line") : tr("task example"))) guarded(app, [&] { v.task_example(++s.seed); });
  ImGui::SameLine();
  if (ImGui::Button(tr("sentence"))) guarded(app, [&] {
      const auto& all = ModelView::sentences();
      v.set_text(all[static_cast<size_t>(s.sentence++) % all.size()]);
    });

  // Ablation mode and shortcuts.
  int mode = v.mean_ablation() ? 1 : 0;
  ImGui::TextUnformatted(tr("knock out:"));
  ImGui::SameLine();
  bool changed = ImGui::RadioButton(tr("zero"), &mode, 0);
  ImGui::SameLine();
  changed |= ImGui::RadioButton(tr("mean"), &mode, 1);
  if (changed) guarded(app, [&] { v.set_mean_ablation(mode == 1); });
  ImGui::SameLine();
  const std::vector<model::HeadRef> induction = v.heads_with_role("induction");
  ImGui::BeginDisabled(induction.empty());
  if (ImGui::Button(tr("induction heads"))) guarded(app, [&] { v.set_ablated(induction); });
  ImGui::EndDisabled();
  if (induction.empty()) disabled_reason(no_induction_reason(v).c_str());
  ImGui::SameLine();
  const bool none_out = v.ablated_heads().empty();
  ImGui::BeginDisabled(none_out);
  if (ImGui::Button(tr("none"))) guarded(app, [&] { v.set_ablated({}); });
  ImGui::EndDisabled();
  if (none_out) disabled_reason(tr("No head is knocked out: there is nothing to restore."));
}

// [SECTION] decode

void decode_controls(App& app, ModelView& v, ModelPanelState& s) {
  ImGui::TextUnformatted(tr("continue:"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::SliderInt(tr("tokens##decode"), &s.decode_steps, 1, 64);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::SliderFloat(tr("temperature (0 = greedy)"), &s.temperature, 0.0f, 2.0f, "%.2f");
  if (s.temperature > 0) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(70);
    ImGui::InputInt(tr("seed##decode"), &s.decode_seed, 0);
  }
  ImGui::SameLine();
  const bool full = static_cast<int64_t>(v.tokens().size()) >= v.model().config.seq_len;
  ImGui::BeginDisabled(full);
  if (ImGui::Button(tr("decode"))) guarded(app, [&] {
      model::SamplingOptions o;
      o.temperature = s.temperature;
      o.seed = static_cast<uint64_t>(s.decode_seed);
      o.step = static_cast<int64_t>(v.tokens().size());  // a longer prefix draws afresh
      v.decode(s.decode_steps, o);
    });
  ImGui::EndDisabled();
  if (full)
    disabled_reason(trf("The sequence already fills the model's %lld positions: shorten it to continue.",
                        static_cast<long long>(v.model().config.seq_len)).c_str());
}

// [SECTION] numbers

// A language model's mean loss on the held-out sample: as trained, with the knocked-out heads,
// and what knocking them out cost.
void heldout_line(const ModelView& v) {
  if (!v.text_model()) return;
  const HeldoutLoss& h = v.heldout();
  if (!v.settled()) {  // measured after the first frames (ModelView::settle)
    ImGui::TextDisabled("%s", tr("measuring the loss on held-out text…"));
    return;
  }
  if (!h.measured) {
    ImGui::TextColored({0.95f, 0.6f, 0.4f, 1}, "%s", trf("no held-out loss: %s", h.why.c_str()).c_str());
    return;
  }
  const std::string what = trf("held-out text (%lld tokens): loss %.3f nats/token", static_cast<long long>(h.tokens), h.trained);
  if (v.ablated_heads().empty()) {
    ImGui::TextUnformatted(what.c_str());
    return;
  }
  const double d = h.ablated - h.trained;
  ImGui::TextUnformatted(what.c_str());
  ImGui::SameLine();
  ImGui::TextColored(d > 0.005 ? ImVec4(0.95f, 0.4f, 0.4f, 1) : ImVec4(0.85f, 0.85f, 0.85f, 1), "%s",
                     trf("knocked out %.3f (%+.3f)", h.ablated, d).c_str());
}

void numbers(const ModelView& v) {
  heldout_line(v);
  const bool ablating = !v.ablated_heads().empty();
  const int cols = ablating ? 5 : 3;
  if (!ImGui::BeginTable("##stats", cols, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn(tr("positions"));
  ImGui::TableSetupColumn(tr("loss"));
  ImGui::TableSetupColumn(tr("accuracy"));
  if (ablating) {
    ImGui::TableSetupColumn(tr("loss, ablated"));
    ImGui::TableSetupColumn(tr("accuracy, ablated"));
  }
  ImGui::TableHeadersRow();
  auto row = [&](const char* name, const model::PartStats& a, const model::PartStats* b) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%s (%lld)", name, static_cast<long long>(a.count));
    ImGui::TableNextColumn();
    ImGui::Text("%.3f", a.loss());
    ImGui::TableNextColumn();
    ImGui::Text("%.0f%%", 100 * a.accuracy());
    if (!b) return;
    ImGui::TableNextColumn();
    ImGui::Text("%.3f", b->loss());
    ImGui::TableNextColumn();
    const bool drop = b->accuracy() < a.accuracy() - 1e-9;
    ImGui::TextColored(drop ? ImVec4(0.95f, 0.4f, 0.4f, 1) : ImVec4(0.85f, 0.85f, 0.85f, 1), "%.0f%%",
                       100 * b->accuracy());
  };
  const auto& base = v.base().stats;
  const auto& abl = v.ablated().stats;
  row(tr("first occurrence"), base.parts[model::kFirst], ablating ? &abl.parts[model::kFirst] : nullptr);
  row(tr("repeated"), base.parts[model::kRepeat], ablating ? &abl.parts[model::kRepeat] : nullptr);
  row(tr("all"), base.all, ablating ? &abl.all : nullptr);
  ImGui::EndTable();
}

// [SECTION] grid

// A head in sentences: its strongest pattern on `s` against uniform attention's `chance`, and,
// for a first-token head, how much of what it writes comes from there (weight is not
// contribution: a sink with a short W_O v takes weight and adds little).
void head_sentences(const model::HeadScores& s, const model::HeadScores& chance) {
  const HeadName n = name_head(s, chance);
  ImGui::TextUnformatted(head_name_sentence(n, ui_lang()).c_str());
  if (n.pattern == HeadPattern::FirstToken)
    ImGui::TextUnformatted(trf("Of what it writes, %.0f %% comes from the first token.", 100 * s.first_contribution).c_str());
}

// What the cells draw: where each head's weight goes, or what each position contributes to
// what the head writes (Kobayashi et al. 2020: a sink with a short W_O v takes weight and adds
// little).
void cell_values(ModelView& v) {
  int what = v.show_contribution() ? 1 : 0;
  ImGui::TextUnformatted(tr("cells show:"));
  ImGui::SameLine();
  bool changed = ImGui::RadioButton(tr("weight alpha"), &what, 0);
  ImGui::SameLine();
  changed |= ImGui::RadioButton(tr("contribution ||alpha W_O v||"), &what, 1);
  if (changed) v.set_show_contribution(what == 1);
}

void grid(App& app, ModelView& v, ModelPanelState& s) {
  const model::ModelConfig& c = v.model().config;
  // Figure units: the UI's text is the figure's 28-unit label size.
  const float scale = ImGui::GetFontSize() / figure::kLabelMin;
  const float width = ImGui::GetContentRegionAvail().x / scale;
  const float below = (ImGui::GetFrameHeight() + 6) / scale;  // room for the checkboxes
  const lessons::Lang lang = panel_lang();
  const int64_t row = marked_row(s, v);
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(&v)) + "|" + std::to_string(v.revision()) + "|" +
                          std::to_string(static_cast<int>(width)) + "|" + panel_theme().name + "|" +
                          (lang == lessons::Lang::Ko ? "ko" : "en") + "|" + std::to_string(row);
  if (key != s.grid_key) {
    s.grid_key = key;
    s.grid = head_grid_view(v, lang, panel_theme().name, width, 300, below, row);  // a working tab: the UI's theme
    want_figure_glyphs(s.grid.figure);
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* list = ImGui::GetWindowDrawList();
  draw_figure(list, s.grid.figure, origin, scale, Backdrop::Window);
  auto at = [&](float x, float y) { return ImVec2{origin.x + x * scale, origin.y + y * scale}; };
  // The layer whose trace the other views show: a bar left of its row.
  if (app.model_layer >= 0 && app.model_layer < static_cast<int64_t>(s.grid.row_label_y.size())) {
    const figure::Rect& first = s.grid.cells[static_cast<size_t>(app.model_layer * c.heads)];
    list->AddRectFilled(at(first.x - 14, first.y), at(first.x - 8, first.bottom()), IM_COL32(255, 255, 255, 200));
  }
  app.model_cells.clear();
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t h = 0; h < c.heads; ++h) {
      const figure::Rect& r = s.grid.cells[static_cast<size_t>(l * c.heads + h)];
      const ImVec2 p = at(r.x, r.y), size{r.w * scale, r.h * scale};
      app.model_cells.push_back({p.x, p.y, size.x, size.y});
      const model::HeadRef ref{l, h};
      ImGui::PushID(static_cast<int>(l * c.heads + h));
      ImGui::SetCursorScreenPos(p);
      if (ImGui::InvisibleButton("cell", size)) {
        app.model_layer = l;
        show_model_layer(app, l);
      }
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::TextUnformatted(
            trf("head %lld.%lld: %s", static_cast<long long>(l), static_cast<long long>(h),
                head_name_text(name_head(v.shown().patterns.at(l, h), v.shown().chance), ui_lang()).c_str()).c_str());
        ImGui::TextDisabled("%s", tr("on the sequence on screen"));
        head_sentences(v.shown().patterns.at(l, h), v.shown().chance);
        ImGui::TextDisabled("%s", v.text_model() ? tr("scores on held-out lines repeated (EOS + r + r, 16 lines)")
                                                 : tr("scores on the scoring batch (BOS + r + r, 64 sequences)"));
        head_sentences(v.roles().at(l, h), v.roles_chance());
        ImGui::TextDisabled("%s", trf("click: layer %lld's 25 steps in the other views", static_cast<long long>(l)).c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      ImGui::SetCursorScreenPos({p.x, p.y + size.y + 3});
      bool ablate = v.is_ablated(ref);
      if (ImGui::Checkbox(tr("knock out"), &ablate)) {
        const auto t0 = std::chrono::steady_clock::now();
        guarded(app, [&] { v.toggle(ref); });
        const int ms = static_cast<int>(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() + 0.5);
        const auto L = static_cast<long long>(l), H = static_cast<long long>(h);
        app.show_banner(ablate ? trf("head %lld.%lld knocked out: recomputed in %d ms", L, H, ms)
                               : trf("head %lld.%lld restored: recomputed in %d ms", L, H, ms),
                        false, 2.0);
      }
      ImGui::PopID();
    }
  // The cursor after the whole figure.
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy({s.grid.figure.width * scale, s.grid.figure.height * scale});
}

// [SECTION] tokens

// "'tok' 23%  'x' 9% ..." : a run's top 5 at position t.
std::string top_line(const ModelView& v, const ModelRun& r, int t) {
  const Prediction& pr = r.predictions[static_cast<size_t>(t)];
  std::string line;
  for (int k = 0; k < kTopTokens; ++k) {
    char percent[16];  // no words: the same in every language
    std::snprintf(percent, sizeof percent, " %.0f%%", 100 * pr.prob[static_cast<size_t>(k)]);
    line += "  '" + v.label(pr.top[static_cast<size_t>(k)]) + "'" + percent;
  }
  return line;
}

// What the model expects after the last token: its top 5 (the first is what greedy decoding
// would add), as trained and with the knocked-out heads.
void next_tokens(const ModelView& v) {
  const int last = static_cast<int>(v.tokens().size()) - 1;
  ImGui::TextUnformatted((std::string(tr("next token, top 5:")) + top_line(v, v.base(), last)).c_str());
  if (!v.ablated_heads().empty())
    ImGui::TextColored({0.92f, 0.47f, 0.47f, 1}, "%s", (std::string(tr("ablated")) + ":" + top_line(v, v.ablated(), last)).c_str());
}

void tokens(const ModelView& v, int64_t marked) {
  const auto& toks = v.tokens();
  const bool ablating = !v.ablated_heads().empty();
  const float line = ImGui::GetTextLineHeight() + 2;
  const char* row_names[3] = {tr("token"), tr("guess"), tr("ablated")};
  // The row names' column: 70 px, or wider when a translation needs it.
  float name_w = 70;
  for (const char* name : row_names) name_w = std::max(name_w, ImGui::CalcTextSize(name).x + 8);
  const float avail = ImGui::GetContentRegionAvail().x - name_w;
  const int rows = ablating ? 3 : 2;
  ImDrawList* list = ImGui::GetWindowDrawList();
  ImGui::TextDisabled("%s", tr("under each token: the model's guess for it (green right, red wrong)"));
  const int n = static_cast<int>(toks.size());
  // Each column as wide as its widest text: a language model's tokens are words, the toy's
  // single characters. Position t-1 predicted token t, so column t shows that guess.
  auto shown = [](std::string s) { return s == " " ? std::string("_") : s; };
  auto guess = [&](const ModelRun& r, int t) { return shown(v.label(r.predictions[static_cast<size_t>(t - 1)].top[0])); };
  std::vector<float> width(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) {
    float w = std::max(ImGui::CalcTextSize("W").x, ImGui::CalcTextSize(shown(v.label(toks[static_cast<size_t>(t)])).c_str()).x);
    if (t > 0) w = std::max(w, ImGui::CalcTextSize(guess(v.base(), t).c_str()).x);
    if (t > 0 && ablating) w = std::max(w, ImGui::CalcTextSize(guess(v.ablated(), t).c_str()).x);
    width[static_cast<size_t>(t)] = w + 6;
  }
  for (int start = 0; start < n;) {
    int end = start;
    for (float used = 0; end < n && (end == start || used + width[static_cast<size_t>(end)] <= avail); ++end)
      used += width[static_cast<size_t>(end)];
    const ImVec2 p = ImGui::GetCursorScreenPos();
    list->AddText({p.x, p.y}, IM_COL32(180, 180, 190, 255), row_names[0]);
    list->AddText({p.x, p.y + line}, IM_COL32(180, 180, 190, 255), row_names[1]);
    if (ablating) list->AddText({p.x, p.y + 2 * line}, IM_COL32(235, 120, 120, 255), row_names[2]);
    float x = p.x + name_w;
    for (int t = start; t < end; x += width[static_cast<size_t>(t)], ++t) {
      const float cw = width[static_cast<size_t>(t)];
      const std::string label = v.label(toks[static_cast<size_t>(t)]);
      list->AddText({x + 2, p.y}, IM_COL32(235, 235, 240, 255), shown(label).c_str());
      if (t == marked)  // the lesson step's token, framed as its row is in the grid
        list->AddRect({x, p.y - 1}, {x + cw, p.y + static_cast<float>(rows) * line + 1}, IM_COL32(255, 214, 64, 255),
                      2.0f, 0, 2.5f);
      if (t == 0) continue;
      auto draw = [&](const ModelRun& r, float y) {
        const Prediction& pr = r.predictions[static_cast<size_t>(t - 1)];
        const ImU32 col = pr.target < 0 ? kUnscored : pr.correct() ? kRight : kWrong;
        list->AddText({x + 2, y}, col, guess(r, t).c_str());
      };
      draw(v.base(), p.y + line);
      if (ablating) draw(v.ablated(), p.y + 2 * line);
      if (ImGui::IsMouseHoveringRect({x, p.y}, {x + cw, p.y + static_cast<float>(rows) * line})) {
        list->AddRect({x, p.y}, {x + cw, p.y + static_cast<float>(rows) * line}, IM_COL32(255, 255, 255, 160));
        ImGui::BeginTooltip();
        const Prediction& pr = v.base().predictions[static_cast<size_t>(t - 1)];
        const char* part = pr.part == model::kRepeat  ? tr("repeated")
                           : pr.part == model::kFirst ? tr("first occurrence")
                                                      : tr("not scored");
        ImGui::TextUnformatted(trf("position %d predicts '%s' (%s)", t, label.c_str(), part).c_str());
        ImGui::TextUnformatted((std::string(tr("as trained")) + ":" + top_line(v, v.base(), t - 1)).c_str());
        if (ablating) ImGui::TextUnformatted((std::string(row_names[2]) + ":" + top_line(v, v.ablated(), t - 1)).c_str());
        ImGui::EndTooltip();
      }
    }
    ImGui::Dummy({avail + name_w, static_cast<float>(rows) * line + 4});
    start = end;
  }
}

WholePanel whole_panel(App& app, ModelView& v) {
  WholePanel p;
  p.sampling = &v.sampling();
  p.whole = &v.whole();
  p.revision = v.revision();
  p.layers = v.model().config.layers;
  p.heads = v.model().config.heads;
  p.label = v.labeller();
  p.is_ablated = [&v](model::HeadRef h) { return v.is_ablated(h); };
  p.toggle = [&app, &v](model::HeadRef h) {
    v.toggle(h);
    show_model_layer(app, app.model_layer);
  };
  p.set_dla_token = [&v](int32_t t) { v.set_dla_token(t); };
  p.mlp = v.model().config.mlp;
  p.shown_layer = app.model_layer;
  p.open_block = [&app](int64_t l) {
    app.model_layer = l;
    show_model_layer(app, l);
  };
  return p;
}

}  // namespace

void panel_model(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "model", tr("Model"), rect)) return end_panel();
  if (!app.model_panel) app.model_panel = std::make_shared<ModelPanelState>();
  ModelPanelState& s = *app.model_panel;
  ModelView& v = *app.model;
  header(app, v, s);
  if (s.tools_open) decode_controls(app, v, s);
  if (ImGui::BeginTabBar("##model-tabs")) {
    auto select = [&](const char* tab) { return s.open_tab == tab ? ImGuiTabItemFlags_SetSelected : 0; };
    if (ImGui::BeginTabItem(tr("Heads###model-heads"), nullptr, select("heads"))) {
      numbers(v);
      next_tokens(v);
      ImGui::Separator();
      cell_values(v);
      grid(app, v, s);
      ImGui::Separator();
      tokens(v, marked_row(s, v));
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Overview###model-overview"), nullptr, select("overview"))) {
      overview_tab(app, whole_panel(app, v), s.whole);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Sampling###model-sampling"), nullptr, select("sampling"))) {
      sampling_tab(app, whole_panel(app, v), s.whole);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Lens###model-lens"), nullptr, select("lens"))) {
      lens_tab(app, whole_panel(app, v), s.whole);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Training###model-training"), nullptr, select("training"))) {
      model_timeline_tab(app);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Experiments###model-experiments"), nullptr, select("experiments"))) {
      model_experiments_tab(app);
      ImGui::EndTabItem();
    }
    s.open_tab.clear();
    ImGui::EndTabBar();
  }
  end_panel();
}

}  // namespace attnsim::app
