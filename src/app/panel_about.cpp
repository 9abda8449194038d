// Help > About attnsim: the version, the BLAS library and its kernel set, and the advice when
// the kernels are weaker than the CPU (engine/blas_kernels.h). The advice used to sit on the
// main screen; now a small mark in the menu bar says there is some and opens this box.
#include <string>

#include "app/app.h"
#include "views/i18n.h"
#include "engine/blas_kernels.h"

namespace attnsim::app {

void blas_status_mark(App& app) {
  if (blas_kernels().warning.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.7f, 0.3f, 1));
  const std::string label = std::string("⚠ ") + tr("slow BLAS kernels");
  if (ImGui::SmallButton(label.c_str())) app.show_about = true;
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("Matrix products run slower than this CPU allows. Click for the advice."));
}

namespace {
constexpr const char* kNameAndVersion = "attnsim " ATTNSIM_VERSION;  // a name: the same in every language
}  // namespace

void panel_about(App& app) {
  if (app.show_about) {
    ImGui::OpenPopup("##about");
    app.show_about = false;
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.4f},
                          ImGuiCond_Appearing, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({std::min(vp->WorkSize.x * 0.9f, ImGui::GetFontSize() * 40), 0});
  if (!ImGui::BeginPopupModal("##about", nullptr, ImGuiWindowFlags_NoTitleBar)) return;
  ImGui::TextUnformatted(kNameAndVersion);
  ImGui::TextWrapped("%s", tr("A step-through simulator of multi-head attention: every number it shows is computed by its own engine."));
  ImGui::Separator();
  const BlasKernels& blas = blas_kernels();
  ImGui::TextWrapped("%s: %s", tr("Matrix products"), blas.summary().c_str());
  if (!blas.warning.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.7f, 0.3f, 1));
    ImGui::TextWrapped("%s", tr("These kernels are weaker than this CPU: every matrix product runs slower than it could. The library's own advice:"));
    ImGui::TextWrapped("%s", blas.warning.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::Spacing();
  if (ImGui::Button(tr("Close"), {ImGui::GetFontSize() * 6, 0}) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

}  // namespace attnsim::app
