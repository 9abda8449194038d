// The start view: what a first-time learner sees. A sentence goes through the language model
// that attnsim trained itself; beside it, what the model expects next (the sampling chart)
// and its heads, each named by what it does. Three doors lead on:
//   Step through attention      the article's example (the "default" scenario)
//   Heads in a language model   the same model with every control (the model scenario)
//   Lessons                     the lesson browser
// Strides, storage ids and byte counts are one click away (the first door), not here.
//   [SECTION] state    the two figures, rebuilt when the view recomputes or the width changes
//   [SECTION] parts    title, sentence, chart, heads, doors
#include <algorithm>
#include <cstring>
#include <string>

#include "app/app.h"
#include "app/figure_imgui.h"
#include "app/lesson_ui.h"
#include "views/head_names.h"
#include "views/i18n.h"
#include "views/model_slides.h"
#include "views/model_view.h"
#include "views/sampling_figure.h"
#include "engine/error.h"

namespace attnsim::app {

namespace {

// [SECTION] state

struct StartState {
  char text[512] = {};
  uint64_t text_revision = ~uint64_t{0};
  figure::Figure chart;
  HeadGridView grid;
  std::string chart_key, grid_key;
};

StartState& start_state() {
  static StartState s;
  return s;
}

std::string figure_key(const void* view, uint64_t revision, float width, float height) {
  return std::to_string(reinterpret_cast<uintptr_t>(view)) + "|" + std::to_string(revision) + "|" +
         std::to_string(static_cast<int>(width)) + "x" + std::to_string(static_cast<int>(height)) + "|" +
         panel_theme().name + "|" + (ui_lang() == Lang::Ko ? "ko" : "en");
}

// [SECTION] parts

void title(const ModelView& v) {
  ImGui::SetWindowFontScale(1.6f);
  ImGui::TextUnformatted(tr("How does a language model read your sentence?"));
  ImGui::SetWindowFontScale(1.0f);
  const model::ModelConfig& c = v.model().config;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", trf("A model attnsim trained itself on English dictionary glosses: %lld layers x %lld heads, width %lld. Every number below is computed now, on this computer.",
                                static_cast<long long>(c.layers), static_cast<long long>(c.heads),
                                static_cast<long long>(c.d_model))
                               .c_str());
  ImGui::PopStyleColor();
}

void sentence(App& app, ModelView& v, StartState& s) {
  if (s.text_revision != v.revision()) {  // the view's text changed elsewhere (a door, a lesson)
    std::snprintf(s.text, sizeof s.text, "%s", v.text().c_str());
    s.text_revision = v.revision();
  }
  ImGui::TextUnformatted(tr("Type a sentence (Enter runs the model):"));
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputText("##start_text", s.text, sizeof s.text, ImGuiInputTextFlags_EnterReturnsTrue)) {
    try {
      v.set_text(s.text);
      s.text_revision = v.revision();
      show_model_layer(app, app.model_layer);
    } catch (const Error& e) {
      app.show_banner(e.what(), true, 8.0);
    }
  }
}

void chart(App& app, ModelView& v, StartState& s, float width_px, float height_px) {
  const float scale = ImGui::GetFontSize() / figure::kLabelMin;
  ImGui::TextUnformatted(tr("What it expects next"));
  const SamplingView& sv = v.sampling();
  const float width = width_px / scale;
  const std::string key = figure_key(&sv, sv.revision(), width, height_px);
  if (key != s.chart_key) {
    s.chart_key = key;
    s.chart = sampling_view_figure(sv.chart(), v.labeller(), ui_lang(), panel_theme().name, width);
    want_figure_glyphs(s.chart);
  }
  // Taller than the room (large text on a small screen): its child window scrolls.
  (void)height_px;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_figure(ImGui::GetWindowDrawList(), s.chart, origin, scale, Backdrop::Window);
  ImGui::Dummy({s.chart.width * scale, s.chart.height * scale});
  app.figure_rects["start_chart"] = {origin.x, origin.y, s.chart.width * scale, s.chart.height * scale};
}

// A head's name on the sentence on screen, as the grid's badges name it (model_slides.h).
HeadName named_here(const ModelView& v, int64_t l, int64_t h) {
  return name_head(v.shown().patterns.at(l, h), v.shown().chance);
}

// The heads furthest from even spreading towards one pattern (head_names.h: lift) on this
// sentence, each with its score beside its chance, most distinct first: what to look at.
void clearest_heads(const ModelView& v, float width_px) {
  const model::ModelConfig& c = v.model().config;
  std::vector<std::pair<double, model::HeadRef>> order;
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t h = 0; h < c.heads; ++h) order.push_back({named_here(v, l, h).lift(), {l, h}});
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width_px);
  ImGui::TextUnformatted(tr("The clearest heads on this sentence"));
  for (size_t i = 0; i < std::min<size_t>(order.size(), 5); ++i) {
    const model::HeadRef& r = order[i].second;
    ImGui::Bullet();
    ImGui::TextWrapped("%lld.%lld  %s", static_cast<long long>(r.layer), static_cast<long long>(r.head),
                       head_name_text(named_here(v, r.layer, r.head), ui_lang()).c_str());
  }
  ImGui::TextDisabled("%s", tr("chance: the score of a head that spread its weight evenly over the same tokens"));
  ImGui::PopTextWrapPos();
}

void heads(App& app, ModelView& v, StartState& s, float width_px, float height_px) {
  const float scale = ImGui::GetFontSize() / figure::kLabelMin;
  ImGui::TextWrapped("%s", tr("Its heads, named by what they do (click one to look inside)"));
  height_px -= ImGui::GetTextLineHeightWithSpacing();
  float width = width_px / scale;
  std::string key = figure_key(&v, v.revision(), width, height_px);
  if (key != s.grid_key) {
    s.grid_key = key;
    s.grid = head_grid_view(v, panel_lang(), panel_theme().name, width, 300, 0);
    // Narrower until the grid fits the height, so every head is on screen at 1280x720; with
    // large text on a small screen no narrower than a third of the room (then it scrolls).
    const float least = width * 0.34f;
    for (int i = 0; i < 6 && s.grid.figure.height * scale > height_px && width > least; ++i) {
      width = std::max(least, width * std::max(0.5f, height_px / (s.grid.figure.height * scale)));
      s.grid = head_grid_view(v, panel_lang(), panel_theme().name, width, 300, 0);
    }
    want_figure_glyphs(s.grid.figure);
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_figure(ImGui::GetWindowDrawList(), s.grid.figure, origin, scale, Backdrop::Window);
  const model::ModelConfig& c = v.model().config;
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t h = 0; h < c.heads; ++h) {
      const figure::Rect& r = s.grid.cells[static_cast<size_t>(l * c.heads + h)];
      ImGui::SetCursorScreenPos({origin.x + r.x * scale, origin.y + r.y * scale});
      ImGui::PushID(static_cast<int>(l * c.heads + h));
      if (ImGui::InvisibleButton("head", {r.w * scale, r.h * scale})) {
        app.presenting_start = false;  // the model view, this head's layer in every view
        show_model_layer(app, l);
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", trf("Head %lld.%lld: %s. Click to see its layer's every step: the pipeline, the tensors and the memory they share.",
                                    static_cast<long long>(l), static_cast<long long>(h),
                                    head_name_text(named_here(v, l, h), ui_lang()).c_str())
                                    .c_str());
      ImGui::PopID();
    }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy({s.grid.figure.width * scale, s.grid.figure.height * scale});
  app.figure_rects["start_heads"] = {origin.x, origin.y, s.grid.figure.width * scale, s.grid.figure.height * scale};
  // Beside the grid, where the height left room: the clearest heads in words.
  const float list_x = s.grid.figure.width * scale + ImGui::GetStyle().ItemSpacing.x * 2;
  if (width_px - list_x > ImGui::GetFontSize() * 12) {
    ImGui::SetCursorScreenPos({origin.x + list_x, origin.y});
    ImGui::BeginGroup();
    clearest_heads(v, width_px - list_x);
    ImGui::EndGroup();
  }
}

// One large button with a line under it saying where it leads.
bool door(const char* label, const char* where, float width) {
  ImGui::BeginGroup();
  const float large = ImGui::CalcTextSize(label).x * 1.25f + ImGui::GetStyle().FramePadding.x * 2 <= width ? 1.25f : 1.0f;
  ImGui::SetWindowFontScale(large);
  const bool pressed = ImGui::Button(label, {width, ImGui::GetFrameHeight() * 1.5f});
  ImGui::SetWindowFontScale(1.0f);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  ImGui::TextDisabled("%s", where);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  return pressed;
}

void doors(App& app, float width_px) {
  // Side by side when each label fits a third of the width; else (large text on a small
  // screen) one under the other.
  const float gap = ImGui::GetStyle().ItemSpacing.x * 3;
  const char* labels[] = {tr("Step through attention"), tr("Heads in a language model"), tr("Lessons")};
  float widest = 0;
  for (const char* l : labels) widest = std::max(widest, ImGui::CalcTextSize(l).x);
  const bool row = widest + ImGui::GetStyle().FramePadding.x * 2 <= (width_px - 2 * gap) / 3;
  const float w = row ? (width_px - 2 * gap) / 3 : width_px;
  const auto next = [&] {
    if (row) ImGui::SameLine(0, gap);
  };
  if (door(tr("Step through attention"), tr("The article's example, one step at a time: shapes, views and copies."), w)) {
    try {
      app_load_scenario(app, "default");
    } catch (const Error& e) {
      app.show_banner(e.what(), true, 8.0);
    }
  }
  next();
  if (door(tr("Heads in a language model"), tr("This model with every control: knock heads out, sample, read the lens."),
           w))
    app.presenting_start = false;
  next();
  if (door(tr("Lessons"), tr("18 lessons, in Korean and English, each number checked by the engine."), w))
    open_lesson_browser();
}

}  // namespace

void panel_start(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "start", "attnsim", rect) || !app.model) return end_panel();
  ModelView& v = *app.model;
  StartState& s = start_state();
  title(v);
  sentence(app, v, s);
  ImGui::Spacing();
  const float doors_h = ImGui::GetFrameHeight() * 1.9f + ImGui::GetTextLineHeightWithSpacing() * 2.5f;
  const ImVec2 room = ImGui::GetContentRegionAvail();
  // The chart and the heads take what the doors leave, at least 12 lines (the panel scrolls).
  const float body_h = std::max(room.y - doors_h, ImGui::GetTextLineHeightWithSpacing() * 12);
  const float left_w = std::floor(room.x * 0.36f);
  ImGui::BeginChild("##start_chart", {left_w, body_h});
  chart(app, v, s, left_w - ImGui::GetStyle().ItemSpacing.x, body_h);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##start_heads", {0, body_h});
  heads(app, v, s, ImGui::GetContentRegionAvail().x, body_h);
  ImGui::EndChild();
  ImGui::Separator();
  ImGui::BeginGroup();
  doors(app, room.x);
  ImGui::EndGroup();
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  app.figure_rects["start_doors"] = {a.x, a.y, b.x - a.x, b.y - a.y};
  end_panel();
}

}  // namespace attnsim::app
