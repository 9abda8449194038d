// Hugging Face panel: a real GPT-2 or Llama-family model (views/hf_view.h) in the right column.
//   [SECTION] state        the text box, the grid's role and source, the decode settings
//   [SECTION] header       the folder, its shape and predicted memory; the layer selector that
//                          drives the pipeline, tensor and memory views
//   [SECTION] text         the user's text and its tokens as boxes over their bytes
//   [SECTION] predictions  top-5 next tokens, plain and ablated; the loss and its change
//   [SECTION] grid         layers x heads, scrollable: a role score per cell; a click knocks
//                          the head out (or back in); knocked-out cells framed and crossed
//   [SECTION] decode       N tokens, greedy or at a temperature, and the text they make
//   The Sampling and Lens tabs are panel_whole.cpp's, over the run's whole pass.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "app/head_cell.h"
#include "app/fonts.h"
#include "app/panel_whole.h"
#include "engine/error.h"
#include "views/head_names.h"
#include "views/hf_view.h"
#include "views/i18n.h"

namespace attnsim::app {

// [SECTION] state

struct HfPanelState {
  char text[2048] = {};
  std::string text_for;  // the view's text the box was last filled from
  int role = 0;          // kRoles: the strongest pattern first
  int source = 1;        // 0: the user's text, 1: repeated random sequences
  int steps = 8;
  float temperature = 0;
  int seed = 1;
  WholeTabsState whole;  // the Sampling and Lens tabs
};

namespace {

constexpr ImU32 kBoxLine = IM_COL32(150, 150, 170, 255);
constexpr ImU32 kBoxFill = IM_COL32(40, 44, 56, 255);

// What the cells show: each head's strongest pattern (head_names.h: its short name over its
// score, the fill its lift over chance), or one score for every head.
struct Role {
  const char* name;
  double model::HeadScores::*score;  // null: the strongest pattern
};
const Role kRoles[] = {{"strongest pattern", nullptr},
                       {"previous-token", &model::HeadScores::previous},
                       {"duplicate-token", &model::HeadScores::duplicate},
                       {"induction", &model::HeadScores::induction},
                       {"first-token share", &model::HeadScores::first}};
constexpr int kRoleCount = static_cast<int>(sizeof kRoles / sizeof kRoles[0]);

// Runs an action that may throw; a refusal is the banner, the view stays as it was.
template <class F>
void guarded(App& app, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    app.show_banner(e.what(), true);
  }
}

// A score 0..1 as a colour: dark blue to yellow (a viridis-like ramp, readable in grey).
ImU32 score_colour(double s) {
  const float t = static_cast<float>(std::clamp(s, 0.0, 1.0));
  const ImVec4 a{0.18f, 0.10f, 0.35f, 1}, m{0.13f, 0.57f, 0.55f, 1}, b{0.99f, 0.91f, 0.15f, 1};
  const ImVec4& p = t < 0.5f ? a : m;
  const ImVec4& q = t < 0.5f ? m : b;
  const float u = t < 0.5f ? t * 2 : (t - 0.5f) * 2;
  return ImGui::GetColorU32(ImVec4{p.x + (q.x - p.x) * u, p.y + (q.y - p.y) * u, p.z + (q.z - p.z) * u, 1});
}

std::string megabytes(int64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return s;
}

// [SECTION] header

void header(App& app, HfView& v) {
  const model::hf::HfConfig& c = v.config();
  ImGui::TextWrapped("%s", v.dir().c_str());
  ImGui::TextDisabled("%s", trf("%s: %lld layers x %lld heads (%lld K/V heads), d_model %lld, vocab %lld, %lld positions",
                                c.model_type.c_str(), static_cast<long long>(c.layers), static_cast<long long>(c.heads),
                                static_cast<long long>(c.kv_heads), static_cast<long long>(c.d_model),
                                static_cast<long long>(c.vocab), static_cast<long long>(c.max_positions)).c_str());
  ImGui::TextDisabled("%s", trf("memory predicted from the headers: %s", megabytes(v.predicted_bytes()).c_str()).c_str());
  int layer = static_cast<int>(v.layer());
  ImGui::SetNextItemWidth(-90);
  if (ImGui::SliderInt(tr("layer"), &layer, 0, static_cast<int>(c.layers) - 1))
    guarded(app, [&] { v.set_layer(layer); });
  if (v.busy()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", tr("computing…"));
  }
  if (!v.error().empty()) ImGui::TextColored({0.95f, 0.4f, 0.4f, 1}, "%s", v.error().c_str());
}

// [SECTION] text

// Each token a box with its label; hover: its id and the bytes it covers.
void token_boxes(HfView& v) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float pad = 3, gap = 2, line = ImGui::GetTextLineHeight() + 2 * pad;
  const float left = ImGui::GetCursorScreenPos().x, right = left + ImGui::GetContentRegionAvail().x;
  ImVec2 p = ImGui::GetCursorScreenPos();
  const float top = p.y;
  for (size_t i = 0; i < v.tokens().size(); ++i) {
    const HfToken& t = v.tokens()[i];
    fonts().want(t.label);
    const float w = ImGui::CalcTextSize(t.label.c_str()).x + 2 * pad;
    if (p.x + w > right && p.x > left) p = {left, p.y + line + gap};
    const ImVec2 q{p.x + w, p.y + line};
    list->AddRectFilled(p, q, kBoxFill, 3);
    list->AddRect(p, q, kBoxLine, 3);
    list->AddText({p.x + pad, p.y + pad}, IM_COL32(235, 235, 240, 255), t.label.c_str());
    if (ImGui::IsMouseHoveringRect(p, q)) {
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(trf("token %zu: id %d", i, t.id).c_str());
      if (t.span.end > t.span.begin)
        ImGui::TextUnformatted(trf("bytes %zu to %zu of the text", t.span.begin, t.span.end).c_str());
      ImGui::EndTooltip();
    }
    p.x = q.x + gap;
  }
  ImGui::Dummy({right - left, p.y + line - top + gap});
}

void text_section(App& app, HfView& v, HfPanelState& s) {
  if (s.text_for != v.text()) {
    std::snprintf(s.text, sizeof s.text, "%s", v.text().c_str());
    s.text_for = v.text();
  }
  fonts().want(s.text);
  if (!v.has_tokenizer()) {
    ImGui::TextWrapped("%s", tr("this folder has no tokenizer (tokenizer.json, or vocab.json + merges.txt): the input is token ids"));
  } else {
    ImGui::SetNextItemWidth(-90);
    const bool enter = ImGui::InputTextMultiline(tr("text"), s.text, sizeof s.text, {-90, ImGui::GetTextLineHeight() * 3},
                                                 ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CtrlEnterForNewLine);
    ImGui::SameLine();
    if (ImGui::Button(tr("Apply")) || enter) guarded(app, [&] { v.set_text(s.text); });
  }
  ImGui::TextDisabled("%s", trf("%zu tokens (hover a box: its id and bytes)", v.tokens().size()).c_str());
  token_boxes(v);
}

// [SECTION] predictions

void predictions(const HfView& v, const HfRun& r) {
  const model::hf::HfText& text = v.text_tools();
  const bool ablating = !r.ablated.empty();
  if (std::isnan(r.loss))
    ImGui::TextDisabled("%s", tr("next-token loss: needs 2 tokens"));
  else if (ablating)
    ImGui::TextUnformatted(trf("next-token loss %.4f nats; with the heads knocked out (%zu): %.4f (%+.4f)", r.loss,
                               r.ablated.size(), r.loss_ablated, r.delta()).c_str());
  else
    ImGui::TextUnformatted(trf("next-token loss %.4f nats (mean over %zu predicted tokens)", r.loss, r.tokens.size() - 1).c_str());
  if (!ImGui::BeginTable("##hf-top", ablating ? 3 : 2, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchSame)) return;
  ImGui::TableSetupColumn(tr("rank"), ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn(tr("next token"));
  if (ablating) ImGui::TableSetupColumn(tr("next token, ablated"));
  ImGui::TableHeadersRow();
  auto cell = [&](const std::vector<model::hf::Prediction>& top, size_t i) {
    ImGui::TableNextColumn();
    if (i >= top.size()) return;
    const std::string label = text.label(top[i].token);
    fonts().want(label);
    ImGui::Text("%s  %.1f%%", label.c_str(), 100 * top[i].prob);
  };
  for (size_t i = 0; i < r.top.size(); ++i) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%zu", i + 1);
    cell(r.top, i);
    if (ablating) cell(r.top_ablated, i);
  }
  ImGui::EndTable();
}

// [SECTION] grid

// The head on one set of tokens, as a sentence (its strongest pattern against uniform attention).
void head_sentence(const model::HeadScores& s, const model::HeadScores& chance) {
  ImGui::TextUnformatted(head_name_sentence(name_head(s, chance), ui_lang()).c_str());
}

void grid(App& app, HfView& v, const HfRun& r, HfPanelState& s) {
  const model::hf::HfConfig& c = v.config();
  // The choices wrap at the panel's edge (Korean words are wider).
  for (int i = 0; i < kRoleCount; ++i) {
    const float w = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(tr(kRoles[i].name)).x;
    if (i && ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <
                 ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
      ImGui::SameLine();
    ImGui::RadioButton(tr(kRoles[i].name), &s.role, i);
  }
  ImGui::RadioButton(tr("on your text"), &s.source, 0);
  ImGui::SameLine();
  ImGui::RadioButton(tr("on repeated random sequences"), &s.source, 1);
  ImGui::SameLine();
  ImGui::BeginDisabled(v.ablated_heads().empty());
  if (ImGui::SmallButton(tr("restore all"))) guarded(app, [&] { v.set_ablated({}); });
  ImGui::EndDisabled();
  if (v.ablated_heads().empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("No head is knocked out: there is nothing to restore."));
  const model::HeadTable& table = s.source == 0 ? r.own : *r.repeated;
  const model::HeadScores& chance = s.source == 0 ? r.own_chance : r.repeated_chance;
  const Role& role = kRoles[std::clamp(s.role, 0, kRoleCount - 1)];
  const bool named = role.score == nullptr;

  // Cells big enough for "0.83" (named: for the widest short name over it, and its chance); the child scrolls
  // both ways for a model of 32 x 32 heads.
  float cell = std::max(ImGui::CalcTextSize("0.00").x + 8, ImGui::GetTextLineHeight() * 1.8f);
  if (named) {
    for (HeadPattern p : kHeadPatterns) cell = std::max(cell, ImGui::CalcTextSize(pattern_short(p, ui_lang()).c_str()).x + 8);
    cell = std::max(cell, ImGui::GetTextLineHeight() * 2 + 8);
    // Room for the chance under the score where the heads fit a panel that way (GPT-2 small's
    // 12); a model of 32 heads a layer keeps it in the tooltip.
    if (c.heads <= 16) {
      HeadName widest;
      widest.chance = 0.88;
      cell = std::max({cell, ImGui::CalcTextSize(head_chance_text(widest, ui_lang()).c_str()).x + 8,
                       ImGui::GetTextLineHeight() * 3 + 8});
    }
  }
  const float label_w = ImGui::CalcTextSize("L00").x + 8, head_h = ImGui::GetTextLineHeight() + 4;
  const ImVec2 content{label_w + static_cast<float>(c.heads) * (cell + 2), head_h + static_cast<float>(c.layers) * (cell + 2)};
  const float height = std::min(content.y + ImGui::GetStyle().ScrollbarSize + 4, ImGui::GetContentRegionAvail().y * 0.6f);
  ImGui::SetNextWindowContentSize(content);
  ImGui::BeginChild("##hf-grid", {0, std::max(height, 4 * cell)}, true, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  for (int64_t h = 0; h < c.heads; ++h) {
    const std::string name = "H" + std::to_string(h);
    list->AddText({o.x + label_w + static_cast<float>(h) * (cell + 2) + 4, o.y}, IM_COL32(180, 180, 190, 255), name.c_str());
  }
  app.hf_cells.clear();
  for (int64_t l = 0; l < c.layers; ++l) {
    const float y = o.y + head_h + static_cast<float>(l) * (cell + 2);
    const std::string name = "L" + std::to_string(l);
    // the layer on screen in the other views: its label bright and a bar beside it
    const bool shown = l == r.layer;
    list->AddText({o.x, y + cell * 0.5f - ImGui::GetTextLineHeight() * 0.5f},
                  shown ? IM_COL32(255, 255, 255, 255) : IM_COL32(150, 150, 160, 255), name.c_str());
    if (shown) list->AddRectFilled({o.x + label_w - 6, y}, {o.x + label_w - 3, y + cell}, IM_COL32(255, 255, 255, 220));
    for (int64_t h = 0; h < c.heads; ++h) {
      const model::HeadRef ref{l, h};
      const model::HeadScores& sc = table.at(l, h);
      const ImVec2 p{o.x + label_w + static_cast<float>(h) * (cell + 2), y}, q{p.x + cell, p.y + cell};
      app.hf_cells.push_back({p.x, p.y, cell, cell});
      if (named) {
        const HeadName n = name_head(sc, chance);
        const double lift = std::max(0.0, n.lift());
        draw_named_cell(list, p, q, score_colour(lift), lift > 0.55 ? IM_COL32(20, 20, 30, 255) : IM_COL32(240, 240, 245, 255),
                        pattern_short(n.pattern, ui_lang()).c_str(), n.score, head_chance_text(n, ui_lang()).c_str(),
                        v.is_ablated(ref));
      } else {
        const double value = sc.*role.score;
        draw_head_cell(list, p, q, score_colour(value),
                       value > 0.55 ? IM_COL32(20, 20, 30, 255) : IM_COL32(240, 240, 245, 255), value, v.is_ablated(ref));
      }
      ImGui::SetCursorScreenPos(p);
      ImGui::PushID(static_cast<int>(l * c.heads + h));
      if (ImGui::InvisibleButton("cell", {cell, cell})) guarded(app, [&] { v.toggle(ref); });
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::TextUnformatted(trf("head %lld.%lld: %s", static_cast<long long>(l), static_cast<long long>(h),
                                   head_name_text(name_head(sc, chance), ui_lang()).c_str()).c_str());
        ImGui::TextDisabled("%s", tr("on your text"));
        head_sentence(r.own.at(l, h), r.own_chance);
        ImGui::TextDisabled("%s", tr("on repeated random sequences"));
        head_sentence(r.repeated->at(l, h), r.repeated_chance);
        ImGui::TextDisabled("%s", tr("click: knock it out or back in"));
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      ImGui::PopID();
    }
  }
  ImGui::SetCursorScreenPos(o);
  ImGui::Dummy(content);
  ImGui::EndChild();
}

// [SECTION] decode

void decode_section(App& app, HfView& v, HfPanelState& s) {
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt(tr("steps"), &s.steps);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::SliderFloat(tr("temperature"), &s.temperature, 0.0f, 2.0f, s.temperature <= 0 ? tr("greedy") : "%.2f");
  if (s.temperature > 0) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(80);
    ImGui::InputInt(tr("seed"), &s.seed);
  }
  ImGui::SameLine();
  const auto T = static_cast<long long>(v.tokens().size()), P = static_cast<long long>(v.config().max_positions);
  ImGui::BeginDisabled(T >= P);
  if (ImGui::Button(tr("Decode")))
    guarded(app, [&] { v.decode(s.steps, s.temperature, static_cast<uint64_t>(std::max(s.seed, 0))); });
  ImGui::EndDisabled();
  if (T >= P && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", trf("The input already fills the model's %lld positions: shorten it to continue.", P).c_str());
  if (const auto& d = v.decoded()) {
    fonts().want(d->text);
    ImGui::TextDisabled("%s", (d->temperature > 0 ? trf("%zu tokens at temperature %.2f (seed %llu), %.0f ms", d->generated.size(),
                                                        d->temperature, static_cast<unsigned long long>(d->seed), d->ms)
                                                  : trf("%zu tokens, greedy, %.0f ms", d->generated.size(), d->ms)).c_str());
    ImGui::TextWrapped("%s", d->text.c_str());
  }
}

WholePanel whole_panel(HfView& v, const HfRun& r) {
  WholePanel p;
  p.sampling = &v.sampling();
  p.whole = r.whole.get();
  p.revision = v.revision();
  p.layers = v.config().layers;
  p.heads = v.config().heads;
  p.label = [&v](int32_t id) { return v.text_tools().label(id); };
  p.is_ablated = [&v](model::HeadRef h) { return v.is_ablated(h); };
  p.toggle = [&v](model::HeadRef h) { v.toggle(h); };
  p.set_dla_token = [&v](int32_t t) { v.set_dla_token(t); };
  p.mlp = true;  // every Hugging Face family attnsim reads has one
  p.shown_layer = r.layer;
  p.open_block = [&v](int64_t l) { v.set_layer(l); };  // the run it starts shows there when it lands
  return p;
}

}  // namespace

void show_hf_layer(App& app) {
  if (!app.hf) return;
  if (auto data = app.hf->run_data()) app.session.show(std::move(data), app.session.scenario().name, "alpha");
}

void panel_hf(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "model", tr("Hugging Face model"), rect)) return end_panel();
  if (!app.hf_panel) app.hf_panel = std::make_shared<HfPanelState>();
  HfPanelState& s = *app.hf_panel;
  HfView& v = *app.hf;
  header(app, v);
  ImGui::Separator();
  text_section(app, v, s);
  if (const auto r = v.run(); r && ImGui::BeginTabBar("##hf-tabs")) {  // the last finished run (the first lands before the panel opens)
    if (ImGui::BeginTabItem(tr("Heads###hf-heads"))) {
      predictions(v, *r);
      ImGui::Separator();
      grid(app, v, *r, s);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Overview###hf-overview"))) {
      overview_tab(app, whole_panel(v, *r), s.whole);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Sampling###hf-sampling"))) {
      sampling_tab(app, whole_panel(v, *r), s.whole);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(tr("Lens###hf-lens"))) {
      lens_tab(app, whole_panel(v, *r), s.whole);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::Separator();
  decode_section(app, v, s);
  end_panel();
}

}  // namespace attnsim::app
