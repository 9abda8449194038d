// The whole pass's tabs of the model panels. See panel_whole.h.
//   [SECTION] sampling   the controls and the chart (views/sampling_figure.h) through the ImGui sink
//   [SECTION] overview   the whole model (views/overview_figure.h), blocks clickable
//   [SECTION] lens       the logit lens table
//   [SECTION] dla        the layers x heads grid of direct contributions, the direct paths, the token
#include "app/panel_whole.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/figure_imgui.h"
#include "app/fonts.h"
#include "app/head_cell.h"
#include "engine/error.h"
#include "engine/trace.h"
#include "figure/palette.h"
#include "figure/slide.h"
#include "views/i18n.h"
#include "views/lens_figure.h"
#include "views/step_names.h"
#include "views/playback.h"

namespace attnsim::app {

namespace {


template <class F>
void guarded(App& app, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    app.show_banner(e.what(), true);
  }
}

ImU32 im_colour(figure::Color c) { return ImGui::GetColorU32(ImVec4{c.r, c.g, c.b, c.a}); }

}  // namespace

// [SECTION] sampling

void sampling_tab(App& app, const WholePanel& p, WholeTabsState& s) {
  SamplingView& v = *p.sampling;
  if (!v.ready()) return;
  model::SamplingOptions o = v.options();
  const int64_t V = v.chart(1).vocab;
  float temperature = static_cast<float>(o.temperature), top_p = static_cast<float>(o.top_p);
  int top_k = static_cast<int>(o.top_k), seed = static_cast<int>(o.seed);
  bool changed = false;
  ImGui::SetNextItemWidth(160);
  changed |= ImGui::SliderFloat(tr("temperature"), &temperature, 0.0f, 2.0f, temperature <= 0 ? tr("greedy") : "%.2f");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  changed |= ImGui::SliderInt(tr("top-k"), &top_k, 0, static_cast<int>(std::min<int64_t>(V, 100)), top_k == 0 ? tr("off") : "%d");
  ImGui::SetNextItemWidth(160);
  changed |= ImGui::SliderFloat(tr("top-p"), &top_p, 0.05f, 1.0f, top_p >= 1 ? tr("off") : "%.2f");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  changed |= ImGui::InputInt(tr("seed"), &seed);
  if (changed) {
    o.temperature = temperature < 0.005f ? 0.0 : temperature;  // the slider's left end is greedy
    o.top_k = top_k;
    o.top_p = std::clamp(static_cast<double>(top_p), 0.05, 1.0);
    o.seed = static_cast<uint64_t>(std::max(seed, 0));
    guarded(app, [&] { v.set_options(o); });
  }
  ImGui::TextDisabled("%s", trf("sampling steps recomputed in %.2f ms (the whole pass took %.1f ms)", v.compute_ms(),
                                p.whole->ms).c_str());

  const float scale = ImGui::GetFontSize() / figure::kLabelMin;
  const float width = ImGui::GetContentRegionAvail().x / scale;
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(&v)) + "|" + std::to_string(v.revision()) + "|" +
                          std::to_string(static_cast<int>(width)) + "|" + panel_theme().name + "|" +
                          (ui_lang() == Lang::Ko ? "ko" : "en") + "|" + std::to_string(s.marked_bar);
  if (key != s.key) {
    s.key = key;
    s.chart = sampling_view_figure(v.chart(12, s.marked_bar), p.label, ui_lang(), panel_theme().name, width);
    want_figure_glyphs(s.chart);
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_figure(ImGui::GetWindowDrawList(), s.chart, origin, scale, Backdrop::Window);
  ImGui::Dummy({s.chart.width * scale, s.chart.height * scale});
}

// [SECTION] overview

namespace {

// The engine's step that shows a whole-pass step of a block, "" for one the pipeline does not
// list (the adds, the MLP): the attention's query is the norm's output.
std::string trace_step(const std::string& step) {
  if (step == "norm_attn") return "query";
  return is_step_name(step) ? step : "";
}

// Shows block l in the pipeline, tensor and memory views, at `step` when they list it.
void select_step(App& app, const WholePanel& p, int64_t l, const std::string& step) {
  guarded(app, [&] {
    if (l != p.shown_layer) p.open_block(l);
    const int i = app.step_index(trace_step(step));
    if (i >= 0) go_to(app.playback, i, false);
  });
}

// An invisible button over figure rect `r`; true when clicked.
bool figure_button(const char* id, const figure::Rect& r, ImVec2 origin, float scale) {
  ImGui::SetCursorScreenPos({origin.x + r.x * scale, origin.y + r.y * scale});
  return ImGui::InvisibleButton(id, {std::max(r.w * scale, 1.0f), std::max(r.h * scale, 1.0f)});
}

}  // namespace

void overview_tab(App& app, const WholePanel& p, WholeTabsState& s) {
  if (s.expanded >= p.layers) s.expanded = -1;  // another model
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", s.expanded < 0 ? tr("click a block: its steps here and in the pipeline, tensor and memory views")
                                            : tr("click a step: it in the pipeline, tensor and memory views"));
  ImGui::PopTextWrapPos();
  const float scale = ImGui::GetFontSize() / figure::kLabelMin;
  const float width = ImGui::GetContentRegionAvail().x / scale;
  const float height = std::max(ImGui::GetContentRegionAvail().y / scale, 400.0f);
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(p.whole)) + "|" + std::to_string(p.revision) + "|" +
                          std::to_string(static_cast<int>(width)) + "|" + std::to_string(static_cast<int>(height)) + "|" +
                          panel_theme().name + "|" + (ui_lang() == Lang::Ko ? "ko" : "en") + "|" + std::to_string(s.expanded);
  if (key != s.overview_key) {
    s.overview_key = key;
    OverviewInput in;
    in.run = p.whole;
    for (int32_t t : p.whole->tokens) in.tokens.push_back(p.label(t));
    in.answer = p.label(p.whole->lens.rows.back().top);
    in.mlp = p.mlp;
    in.expanded = s.expanded;
    s.overview = overview_view_figure(in, ui_lang(), panel_theme().name, width, height, &s.overview_layout);
    want_figure_glyphs(s.overview);
  }
  const OverviewLayout& lay = s.overview_layout;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* list = ImGui::GetWindowDrawList();
  draw_figure(list, s.overview, origin, scale, Backdrop::Window);
  auto frame = [&](const figure::Rect& r) {
    list->AddRect({origin.x + r.x * scale, origin.y + r.y * scale}, {origin.x + r.right() * scale, origin.y + r.bottom() * scale},
                  IM_COL32(255, 255, 255, 230), 0, 0, 3);
  };
  // The open block's steps and every head's map first: ImGui gives a click to the first
  // button under it, so they win over the block's box they lie in.
  for (size_t i = 0; i < lay.steps.size(); ++i) {
    const OverviewStep& st = lay.steps[i];
    ImGui::PushID(static_cast<int>(i));
    if (figure_button("step", st.rect, origin, scale)) select_step(app, p, s.expanded, st.step);
    if (ImGui::IsItemHovered()) {
      const std::string name = step_display_name(st.step, ui_lang());
      ImGui::SetTooltip("%s", (trace_step(st.step).empty()
                                   ? trf("%s (%s): the pipeline lists the block's attention steps; attnsim-cli trace --whole dumps this one", name.c_str(), st.step.c_str())
                                   : trf("%s (%s): click to select it in the pipeline, tensor and memory views", name.c_str(), st.step.c_str())).c_str());
    }
    ImGui::PopID();
  }
  for (size_t l = 0; l < lay.heads.size(); ++l)
    for (size_t h = 0; h < lay.heads[l].size(); ++h) {
      ImGui::PushID(static_cast<int>(1000 + l * lay.heads[l].size() + h));
      if (figure_button("head", lay.heads[l][h], origin, scale)) {
        s.expanded = static_cast<int64_t>(l);
        select_step(app, p, static_cast<int64_t>(l), "alpha");
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", trf("%s: its attention weights on this sequence (rows: queries, columns: keys)",
                                    step_display_name("layer_" + std::to_string(l) + "/head_" + std::to_string(h), ui_lang()).c_str()).c_str());
      ImGui::PopID();
    }
  if (s.expanded >= 0) {
    if (figure_button("close", lay.header, origin, scale)) s.expanded = -1;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("close this block"));
  }
  for (size_t l = 0; l < lay.blocks.size(); ++l) {
    const figure::Rect& r = lay.blocks[l];
    if (static_cast<int64_t>(l) == p.shown_layer) frame(r);  // the block the other views show
    if (static_cast<int64_t>(l) == s.expanded) continue;
    ImGui::PushID(static_cast<int>(l));
    if (figure_button("block", r, origin, scale)) {
      s.expanded = static_cast<int64_t>(l);
      guarded(app, [&] { p.open_block(static_cast<int64_t>(l)); });
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s", trf("block %zu: click for its steps", l).c_str());
    ImGui::PopID();
  }
  // Where the blocks and the open block's steps are on screen (the window tests click them).
  auto screen = [&](const figure::Rect& r) { return ImVec4{origin.x + r.x * scale, origin.y + r.y * scale, r.w * scale, r.h * scale}; };
  for (size_t l = 0; l < lay.blocks.size(); ++l) app.figure_rects["overview_block_" + std::to_string(l)] = screen(lay.blocks[l]);
  if (s.expanded >= 0) app.figure_rects["overview_open"] = screen(lay.header);
  for (const OverviewStep& st : lay.steps) app.figure_rects["overview_step_" + st.step] = screen(st.rect);
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy({s.overview.width * scale, s.overview.height * scale});
}

// [SECTION] lens

namespace {

// A step by its display name in the UI language, its stable name beside it in small,
// disabled-colour type ("block 0  layer_0"; step_names.h).
void step_name_cell(const std::string& step) {
  ImGui::TextUnformatted(step_display_name(step, ui_lang()).c_str());
  ImGui::SameLine();
  ImGui::SetWindowFontScale(0.8f);
  ImGui::TextDisabled("%s", step.c_str());
  ImGui::SetWindowFontScale(1.0f);
}

void lens_table(const WholePanel& p) {
  const model::LogitLens& lens = p.whole->lens;
  const std::string answer = p.label(lens.target);
  fonts().want(answer);
  ImGui::TextWrapped("%s", trf("logit lens at the last position: the stream after each stage, read through the final norm and the unembedding; the final answer is '%s'", answer.c_str()).c_str());
  if (!ImGui::BeginTable("##lens", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn(tr("stream after"));
  ImGui::TableSetupColumn(tr("top token"));
  ImGui::TableSetupColumn(tr("its probability"));
  ImGui::TableSetupColumn(tr("final answer's probability"));
  ImGui::TableHeadersRow();
  for (const model::LensRow& r : lens.rows) {
    const std::string top = p.label(r.top);
    fonts().want(top);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    step_name_cell(r.stage);
    ImGui::TableNextColumn();
    if (r.top == lens.target)
      ImGui::TextColored({0.45f, 0.85f, 0.55f, 1}, "%s", top.c_str());
    else
      ImGui::TextUnformatted(top.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%%", 100 * r.top_prob);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%%", 100 * r.target_prob);
  }
  ImGui::EndTable();
}

// [SECTION] dla

// The attribution's target, chosen by word: a combo of the likeliest next tokens as text (the
// first is the model's own answer, which then follows the sequence), or any token typed as it
// reads.
void dla_token_picker(App& app, const WholePanel& p, WholeTabsState& s) {
  const model::LogitAttribution& dla = p.whole->dla;
  const std::string name = p.label(dla.token);
  fonts().want(name);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(trf("direct logit attribution of '%s': logit %.3f, the parts sum to %.3f", name.c_str(), dla.logit,
                             dla.sum()).c_str());
  ImGui::PopTextWrapPos();
  const std::vector<TokenChoice> top = top_token_choices(*p.whole, 10);
  auto item = [&](const TokenChoice& c) {
    char prob[16];  // no words: the same in every language
    std::snprintf(prob, sizeof prob, "  %.0f%%", 100 * c.prob);
    const std::string word = p.label(c.id);
    fonts().want(word);
    return "'" + word + "'" + prob;
  };
  ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x * 0.5f, ImGui::GetFontSize() * 14));
  if (ImGui::BeginCombo(tr("attribute the word"), ("'" + name + "'").c_str())) {
    for (size_t i = 0; i < top.size(); ++i) {
      const bool chosen = top[i].id == dla.token;
      if (ImGui::Selectable(item(top[i]).c_str(), chosen))
        guarded(app, [&] { p.set_dla_token(i == 0 ? -1 : top[i].id); });  // the first: the model's answer
      if (chosen) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  // Any other token, typed as it reads in the grids ("·" for a leading space, as the labels).
  ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x * 0.4f, ImGui::GetFontSize() * 10));
  if (ImGui::InputText(tr("or type a token"), s.dla_word, sizeof s.dla_word, ImGuiInputTextFlags_EnterReturnsTrue))
    guarded(app, [&] {
      const std::string want = s.dla_word;
      for (int32_t id = 0; id < static_cast<int32_t>(p.whole->last_logits.numel()); ++id)
        if (p.label(id) == want) return p.set_dla_token(id);
      throw Error(trf("no token of this model reads '%s' (the likeliest are in the list)", want.c_str()));
    });
}

void dla_grid(App& app, const WholePanel& p) {
  const model::LogitAttribution& dla = p.whole->dla;
  double m = 1e-9;
  for (int64_t l = 0; l < p.layers; ++l)
    for (int64_t h = 0; h < p.heads; ++h) m = std::max(m, std::abs(head_part(dla, l, h)));
  const float cell = std::max(ImGui::CalcTextSize("-0.00").x + 10, ImGui::GetTextLineHeight() * 1.8f);
  const float label_w = ImGui::CalcTextSize("L00").x + 8, head_h = ImGui::GetTextLineHeight() + 4;
  const ImVec2 content{label_w + static_cast<float>(p.heads) * (cell + 2), head_h + static_cast<float>(p.layers) * (cell + 2)};
  ImGui::PushTextWrapPos(0.0f);  // wrapped at the panel's edge
  ImGui::TextDisabled("%s", tr("each head's direct contribution (click: knock it out or back in; the grid shows the pass as trained)"));
  ImGui::PopTextWrapPos();
  const float height = std::min(content.y + ImGui::GetStyle().ScrollbarSize + 4, std::max(ImGui::GetContentRegionAvail().y * 0.5f, 4 * cell));
  ImGui::SetNextWindowContentSize(content);
  ImGui::BeginChild("##dla-grid", {0, height}, true, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  for (int64_t h = 0; h < p.heads; ++h)
    list->AddText({o.x + label_w + static_cast<float>(h) * (cell + 2) + 4, o.y}, IM_COL32(180, 180, 190, 255),
                  ("H" + std::to_string(h)).c_str());
  for (int64_t l = 0; l < p.layers; ++l) {
    const float y = o.y + head_h + static_cast<float>(l) * (cell + 2);
    list->AddText({o.x, y + cell * 0.5f - ImGui::GetTextLineHeight() * 0.5f}, IM_COL32(180, 180, 190, 255),
                  ("L" + std::to_string(l)).c_str());
    for (int64_t h = 0; h < p.heads; ++h) {
      const model::HeadRef ref{l, h};
      const double value = head_part(dla, l, h);
      const ImVec2 a{o.x + label_w + static_cast<float>(h) * (cell + 2), y}, b{a.x + cell, a.y + cell};
      // Diverging: 0 is the white middle, so the sign reads as the hue.
      draw_head_cell(list, a, b,
                     im_colour(figure::colormap(figure::ColorMapId::Diverging, static_cast<float>(0.5 + value / (2 * m)))),
                     IM_COL32(20, 20, 30, 255), value, p.is_ablated(ref));
      ImGui::SetCursorScreenPos(a);
      ImGui::PushID(static_cast<int>(l * p.heads + h));
      if (ImGui::InvisibleButton("dla", {cell, cell})) guarded(app, [&] { p.toggle(ref); });
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", trf("head %lld.%lld writes %+.4f into this logit (click: knock it out or back in)",
                                    static_cast<long long>(l), static_cast<long long>(h), value).c_str());
      ImGui::PopID();
    }
  }
  ImGui::SetCursorScreenPos(o);
  ImGui::Dummy(content);
  ImGui::EndChild();
}

void direct_paths(const WholePanel& p) {
  ImGui::TextDisabled("%s", tr("the direct paths: what no head writes"));
  if (!ImGui::BeginTable("##dla-direct", 2, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  for (const model::LogitPart& part : direct_parts(p.whole->dla)) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    step_name_cell(part.name);
    ImGui::TableNextColumn();
    ImGui::Text("%+.4f", part.value);
  }
  ImGui::EndTable();
}

}  // namespace

void lens_tab(App& app, const WholePanel& p, WholeTabsState& s) {
  lens_table(p);
  ImGui::Separator();
  dla_token_picker(app, p, s);
  dla_grid(app, p);
  direct_paths(p);
}

}  // namespace attnsim::app
