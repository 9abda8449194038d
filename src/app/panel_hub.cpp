// File > Open from Hugging Face…: a model by its Hub name (hub_download.h does the work, on
// the desktop and in the page alike). The window:
//   Model [ORG/NAME[@REV]]  [Open]
//   Token [••••] for gated or private models, this session only ([x] remember, the page only)
//   while it runs: the file, a bar of bytes in hand over the model's total, the rate, the
//                  time left, and Cancel (what arrived is kept: opening it again resumes)
//   a failure: its one line, also as the banner
//   Stored models (where): name, commit, size, Open, Delete (asks first)
// A finished job opens its folder like a dropped one (open_files.h), even with the window
// closed meanwhile.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "app/app.h"
#include "app/hub_download.h"
#include "app/open_files.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "views/i18n.h"

namespace attnsim::app {

struct HubPanelState {
  bool open = false;
  bool focus_name = false;
  char name[256] = "openai-community/gpt2";
  char token[512] = "";
  bool remember = false;
  bool listed = false;
  std::string last_error;
  std::string confirm;  // the stored model Delete asks about
};

namespace {

HubPanelState& state(App& app) {
  if (!app.hub_panel) app.hub_panel = std::make_shared<HubPanelState>();
  return *app.hub_panel;
}

void copy_into(char* dst, size_t size, const std::string& s) {
  std::snprintf(dst, size, "%s", s.c_str());
}

void start(HubPanelState& s) {
  s.last_error.clear();
  std::string token = s.token;
  if (hub_can_remember_token()) hub_remember_token(s.remember ? token : "");
  hub_start(s.name, token);
}

std::string clock(double seconds) {
  const int64_t t = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(t / 3600),
                               static_cast<long long>(t / 60 % 60), static_cast<long long>(t % 60));
  else std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(t / 60), static_cast<long long>(t % 60));
  return buf;
}

// "12.3 MB/s · 0:34 left", from the bytes received in this run (a resumed file's kept part is
// not a rate).
std::string rate_line(const HubJob& j) {
  if (j.seconds < 0.5 || j.fetched <= 0) return "";
  const double rate = static_cast<double>(j.fetched) / j.seconds;
  std::string line = human_bytes(static_cast<int64_t>(rate)) + "/s";
  if (j.total > j.done) line += " · " + trf("%s left", clock(static_cast<double>(j.total - j.done) / rate).c_str());
  return line;
}

void progress(const HubJob& j) {
  const std::string what = j.file.empty()  ? (j.total > 0 ? tr("Opening…") : tr("Asking the Hub…"))
                           : j.verifying   ? trf("%s: checking its hash…", j.file.c_str())
                                           : j.file;
  ImGui::TextUnformatted(what.c_str());
  const float f = j.total > 0 ? static_cast<float>(static_cast<double>(j.done) / static_cast<double>(j.total)) : 0.0f;
  const std::string bytes = j.total > 0 ? human_bytes(j.done) + " / " + human_bytes(j.total) : "";
  ImGui::ProgressBar(std::clamp(f, 0.0f, 1.0f), ImVec2(-1, 0), bytes.c_str());
  ImGui::TextUnformatted(rate_line(j).c_str());
  ImGui::SameLine(ImGui::GetContentRegionAvail().x - 80);
  if (ImGui::Button(tr("Cancel"), ImVec2(80, 0))) hub_cancel();
}

void stored_table(HubPanelState& s, bool running) {
  const auto models = hub_stored();
  ImGui::TextUnformatted(tr("Stored models"));
  ImGui::SameLine();
  ImGui::TextDisabled("%s", hub_store_where().c_str());
  if (models.empty()) {
    ImGui::TextDisabled("%s", tr("none yet"));
    return;
  }
  if (!ImGui::BeginTable("stored", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn(tr("Model"), ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableSetupColumn(tr("Commit"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn(tr("Size"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 150.0f);
  ImGui::TableHeadersRow();
  for (const StoredModel& m : models) {
    ImGui::PushID(m.name.c_str());
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.name.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.commit.substr(0, 10).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(human_bytes(m.bytes).c_str());
    ImGui::TableNextColumn();
    ImGui::BeginDisabled(running);
    if (ImGui::SmallButton(tr("Open"))) {
      copy_into(s.name, sizeof s.name, m.name);
      start(s);
    }
    ImGui::SameLine();
    if (ImGui::SmallButton(tr("Delete"))) s.confirm = m.name;
    ImGui::EndDisabled();
    ImGui::PopID();
  }
  ImGui::EndTable();
}

void confirm_delete(App& app, HubPanelState& s) {
  if (s.confirm.empty()) return;
  const char* title = tr("Delete a stored model");
  ImGui::OpenPopup(title);
  if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::Text("%s", trf("Delete %s, every revision of it?", s.confirm.c_str()).c_str());
  ImGui::TextDisabled("%s", hub_store_where().c_str());
  if (ImGui::Button(tr("Delete"))) {
    for (const StoredModel& m : hub_stored())
      if (m.name == s.confirm) {
        try {
          hub_delete_stored(m);
        } catch (const Error& e) {
          app.show_banner(e.what(), true, 10.0);
        }
      }
    s.confirm.clear();
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button(tr("Keep"))) {
    s.confirm.clear();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

// A finished job: its folder opened in the model scenario, or its error as the banner.
void take_finished(App& app, HubPanelState& s) {
  const HubJob j = hub_job();
  if (j.state == HubJob::State::Done) {
    hub_job_taken();
    try {
      open_user_path(app, j.dir);
      const std::string how =
          j.from_store ? std::string(tr("opened from what is stored, no network"))
                       : trf("downloaded %s in %.1f s", human_bytes(j.fetched).c_str(), j.seconds);
      app.show_banner(j.name + ": " + how, false, 8.0);
      s.open = false;
    } catch (const Error& e) {
      s.last_error = one_line(e.what());
      app.show_banner(s.last_error, true, 10.0);
    }
    hub_refresh_stored();
  } else if (j.state == HubJob::State::Failed) {
    hub_job_taken();
    s.last_error = j.error;
    app.show_banner(j.error, true, 10.0);
    hub_refresh_stored();
  }
}

}  // namespace

void open_hub_window(App& app, const std::string& name, bool start_now, const std::string& token) {
  HubPanelState& s = state(app);
  s.open = true;
  s.focus_name = true;
  s.listed = false;
  if (!name.empty()) copy_into(s.name, sizeof s.name, name);
  if (!token.empty()) copy_into(s.token, sizeof s.token, token);
  if (hub_can_remember_token() && !s.token[0]) {
    copy_into(s.token, sizeof s.token, hub_remembered_token());
    s.remember = s.token[0] != 0;
  }
  if (start_now) start(s);
}

void panel_hub(App& app) {
  if (!app.hub_panel) return;
  HubPanelState& s = *app.hub_panel;
  take_finished(app, s);
  if (!s.open) return;
  if (!s.listed) {
    hub_refresh_stored();
    s.listed = true;
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.3f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(620, 0), ImGuiCond_Appearing);
  ImGui::SetNextWindowBgAlpha(1.0f);  // over the heatmaps, which would show through
  if (!ImGui::Begin(tr("Open from Hugging Face"), &s.open, ImGuiWindowFlags_NoCollapse)) return ImGui::End();
  const HubJob j = hub_job();
  const bool running = j.state == HubJob::State::Running;
  ImGui::BeginDisabled(running);
  ImGui::SetNextItemWidth(-90);
  if (s.focus_name) {
    ImGui::SetKeyboardFocusHere();
    s.focus_name = false;
  }
  const bool enter = ImGui::InputTextWithHint("##name", "openai-community/gpt2", s.name, sizeof s.name,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button(tr("Open"), ImVec2(80, 0)) || enter) start(s);
  ImGui::SetNextItemWidth(-90);
  ImGui::InputTextWithHint("##token", tr("access token (gated or private models)"), s.token, sizeof s.token,
                           ImGuiInputTextFlags_Password);
  ImGui::TextDisabled("%s", tr("The token is kept for this session only; it is never shown or written to a file."));
  if (hub_can_remember_token()) ImGui::Checkbox(tr("Remember the token in this browser"), &s.remember);
  ImGui::EndDisabled();
  ImGui::Separator();
  if (running) progress(j);
  else if (!s.last_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextWrapped("%s", s.last_error.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::Separator();
  stored_table(s, running);
  confirm_delete(app, s);
  ImGui::End();
}

}  // namespace attnsim::app
