// Controls panel: scenario, sentence(s), sizes, masks, seed, dropout, W_O = identity, the
// bug, one editable input cell. Every change recomputes on the worker thread; an invalid
// combination shows the engine's own message here and the last good run stays on screen.
#include <cstdio>
#include <cstring>

#include "app/app.h"
#include "app/fonts.h"
#include "views/i18n.h"
#include "engine/backend.h"
#include "engine/error.h"

namespace attnsim::app {

namespace {

// Tq / Tk follow the sentences: the longest sentence sets the length.
void fit_lengths(Scenario& s) {
  auto longest = [](const std::vector<std::string>& sentences) {
    int64_t n = 0;
    for (const auto& x : sentences) n = std::max<int64_t>(n, static_cast<int64_t>(split_tokens(x).size()));
    return n;
  };
  if (s.sentences.empty()) return;
  s.config.tq = std::max<int64_t>(1, longest(s.sentences));
  s.config.tk = s.config.self_attention || s.key_sentences.empty()
                    ? s.config.tq
                    : std::max<int64_t>(1, longest(s.key_sentences));
}

bool input_text(const char* label, std::string& text) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s", text.c_str());
  if (!ImGui::InputText(label, buf, sizeof buf)) return false;
  text = buf;
  fonts().want(text);  // new Hangul glyphs join the atlas before the next frame
  return true;
}

std::string join_lengths(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ":" : "") + std::to_string(v[i]);
  return s;
}

bool int64_input(const char* label, int64_t& v) {
  int x = static_cast<int>(v);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
  if (!ImGui::InputInt(label, &x)) return false;
  v = x;
  return true;
}

}  // namespace

void panel_controls(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "controls", tr("Controls"), rect)) return end_panel();
  Scenario& s = app.session.scenario();
  MhaConfig& c = s.config;
  bool changed = false;

  // scenario
  const bool ko = ui_lang() == Lang::Ko;
  if (ImGui::BeginCombo(tr("Scenario"), s.name.c_str())) {
    for (const auto& sc : all_scenarios())
      if (ImGui::Selectable(sc.name.c_str(), sc.name == s.name)) app_load_scenario(app, sc.name);
    ImGui::EndCombo();
  }
  ImGui::TextWrapped("%s", (ko ? s.title_ko : s.title_en).c_str());
  if (ImGui::Button(tr("Korean sentence"))) app_load_scenario(app, "default");
  ImGui::SameLine();
  if (ImGui::Button(tr("English sentence"))) app_load_scenario(app, "default-en");
  ImGui::Separator();
  // A decode scenario on the trained model shows the checkpoint's run: nothing here edits it.
  const bool from_checkpoint = s.decode.trained;
  if (from_checkpoint) ImGui::TextWrapped("%s", tr("Decode: the trained model's weights (settings come from the checkpoint)"));
  ImGui::BeginDisabled(from_checkpoint);

  // sentences: one per batch element shown (the last one repeats for the rest)
  if (!s.sentences.empty()) {
    ImGui::TextUnformatted(tr("Sentence"));
    for (size_t i = 0; i < s.sentences.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      ImGui::SetNextItemWidth(-1);
      if (input_text("##sentence", s.sentences[i])) { fit_lengths(s); changed = true; }
      ImGui::PopID();
    }
    bool cross = !c.self_attention;
    if (ImGui::Checkbox(tr("Cross-attention"), &cross)) {
      c.self_attention = !cross;
      if (cross && s.key_sentences.empty()) s.key_sentences = {"고양이 한 마리가 부엌에 있다"};
      fit_lengths(s);
      changed = true;
    }
    if (!c.self_attention) {
      ImGui::TextUnformatted(tr("Second sentence (keys, cross-attention)"));
      ImGui::SetNextItemWidth(-1);
      if (input_text("##keys", s.key_sentences[0])) { fit_lengths(s); changed = true; }
    }
  }

  // sizes
  changed |= int64_input(tr("Batch"), c.batch);
  changed |= int64_input("Tq", c.tq);
  if (c.self_attention) c.tk = c.tq;
  else changed |= int64_input("Tk", c.tk);
  changed |= int64_input("d_model", c.d_model);
  changed |= int64_input(tr("Heads"), c.heads);
  int seed = static_cast<int>(c.seed);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
  if (ImGui::InputInt(tr("Seed"), &seed)) { c.seed = static_cast<uint64_t>(std::max(seed, 0)); changed = true; }
  changed |= ImGui::Checkbox(tr("Bias"), &c.bias);
  ImGui::SameLine();
  changed |= ImGui::Checkbox(tr("W_O = identity"), &c.wo_identity);
  bool dropout = c.train && c.dropout > 0;
  if (ImGui::Checkbox(tr("Dropout (train mode)"), &dropout)) {
    c.train = dropout;
    c.dropout = dropout ? 0.1f : 0.0f;
    changed = true;
  }
  if (dropout) {
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
    changed |= ImGui::SliderFloat("p", &c.dropout, 0.0f, 0.9f, "%.2f");
  }

  // masks and bug
  ImGui::Separator();
  changed |= ImGui::Checkbox(tr("Causal mask"), &c.mask.causal);
  std::string keys = join_lengths(c.mask.key_lengths), queries = join_lengths(c.mask.query_lengths);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
  bool lengths_changed = input_text(tr("Key lengths"), keys);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
  lengths_changed |= input_text(tr("Query lengths"), queries);
  if (lengths_changed) {
    try {
      std::string spec = c.mask.causal ? "causal" : "";
      if (!keys.empty()) spec += (spec.empty() ? "" : ",") + std::string("key-padding=") + keys;
      if (!queries.empty()) spec += (spec.empty() ? "" : ",") + std::string("query-padding=") + queries;
      const PadSide side = c.mask.side;
      c.mask = parse_mask_spec(spec);
      c.mask.side = side;
      changed = true;
    } catch (const Error& e) {
      app.show_banner(e.what(), true);
    }
  }
  bool left = c.mask.side == PadSide::Left;
  if (ImGui::Checkbox(tr("padding on the left (side=left)"), &left)) { c.mask.side = left ? PadSide::Left : PadSide::Right; changed = true; }
  if (ImGui::BeginCombo(tr("bug"), bug_name(c.bug))) {
    for (const auto& b : all_bugs())
      if (ImGui::Selectable(b.name, b.bug == c.bug)) { c.bug = b.bug; changed = true; }
    ImGui::EndCombo();
  }

  // one input cell
  ImGui::Separator();
  ImGui::TextUnformatted(tr("Edit input cell"));
  static int cell[3] = {0, 0, 0};
  static float value = 3.0f;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.6f);
  ImGui::InputInt3("b t j", cell);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
  ImGui::InputFloat(tr("value"), &value, 0.5f, 1.0f, "%.3f");
  if (ImGui::Button(tr("Set"))) {
    app.session.edits()[{cell[0], cell[1], cell[2]}] = value;
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::Button(tr("Clear edits"))) { app.session.edits().clear(); changed = true; }
  if (!app.session.edits().empty())
    ImGui::TextDisabled("%s", trf("%zu edited", app.session.edits().size()).c_str());

  // backend: CUDA is looked for when the list opens, not every frame: asking loads the CUDA
  // runtime (backend_registry.cpp), which a session that never opens this list never pays
  ImGui::Separator();
  if (ImGui::BeginCombo(tr("Backend"), app.session.backend().c_str())) {
    if (ImGui::Selectable("cpu", app.session.backend() == "cpu")) { app.session.set_backend("cpu"); changed = true; }
    std::string why;
    const bool cuda = cuda_available(&why);
    ImGui::BeginDisabled(!cuda);
    if (ImGui::Selectable("cuda", app.session.backend() == "cuda")) { app.session.set_backend("cuda"); changed = true; }
    ImGui::EndDisabled();
    if (!cuda && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", (tr("CUDA is not available here: ") + why).c_str());
    ImGui::EndCombo();
  }

  ImGui::EndDisabled();
  if (!app.session.error().empty()) {
    ImGui::Separator();
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.40f, 1));
    ImGui::TextWrapped("%s", app.session.error().c_str());
    ImGui::PopStyleColor();
  }
  if (changed) {
    if (s.has_reference) {
      // the correct run follows every setting except the bug and the case's own mask
      const MaskSpec ref_mask = s.reference.mask;
      const Bug ref_bug = s.reference.bug;
      s.reference = c;
      s.reference.bug = ref_bug;
      if (c.bug != Bug::None) s.reference.mask = c.mask;
      else s.reference.mask = ref_mask;
    }
    app.session.request();
  }
  end_panel();
}

}  // namespace attnsim::app
