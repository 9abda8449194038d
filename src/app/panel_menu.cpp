// The menu bar: export (export_status.h says where each went), language, motion, scenarios.
#include <string>

#include "app/app.h"
#include "app/export_status.h"
#include "app/platform.h"
#include "app/ui_scale.h"
#include "views/i18n.h"
#include "views/step_names.h"
#include "engine/error.h"

namespace attnsim::app {

namespace {

void request_export(App& app, const std::string& panel) {
  app.export_request.pending = true;
  app.export_request.panel = panel;
  app.export_request.path.clear();  // named after the step
  app.export_request.scale = app.export_scale;
  app.export_request.transparent = app.export_transparent;
}

}  // namespace

void panel_menu(App& app) {
  // ImGui 1.86's GLFW backend indexes KeysDown by GLFW key code; 301 is GLFW_KEY_F12.
  if (!ImGui::GetIO().WantTextInput && ImGui::IsKeyPressed(301, false))
    request_export(app, "window");
  panel_export_status(app);  // where the last export went, or the deck being made
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu(tr("File"))) {
    if (ImGui::MenuItem(tr("Open from Hugging Face…"))) open_hub_window(app, "", false);
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Export window PNG"), "F12")) request_export(app, "window");
    if (ImGui::MenuItem(tr("Export panel PNG"))) request_export(app, app.focused_panel);
    ImGui::Separator();
    ImGui::TextUnformatted(tr("Export scale"));
    for (int s : {1, 2, 4}) {
      ImGui::SameLine();
      const std::string label = std::to_string(s) + "x";
      if (ImGui::RadioButton(label.c_str(), app.export_scale == s)) app.export_scale = s;
    }
    ImGui::Checkbox(tr("Transparent background"), &app.export_transparent);
    ImGui::Separator();
    for (const char* ext : {"png", "svg", "pdf"}) {
      const std::string label = std::string(tr("Export slide")) + " (" + ext + ")";
      const bool drawn_by_cairo = std::string(ext) != "svg";
      if (drawn_by_cairo && !platform_has_cairo()) {
        // The browser: a slide's PNG is the slide view captured from the canvas; PDF needs
        // Cairo, which only the desktop app has, and the item says so where it would be.
        if (std::string(ext) == "png") {
          if (ImGui::MenuItem(label.c_str())) {
            app.presenting_slide = true;
            request_export(app, "slide");
          }
        } else {
          ImGui::MenuItem(label.c_str(), nullptr, false, false);
          if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("%s", tr("PDF export needs Cairo: use the desktop app"));
        }
        continue;
      }
      if (ImGui::MenuItem(label.c_str())) {
        std::string written, error;
        if (export_slide(app, ext, &written, &error)) note_export(app, written);  // its full path, and its folder
        else note_export_failed(app, error);
      }
    }
    lesson_deck_menu_item(app);
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Quit"))) app.quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(tr("View"))) {
    if (ImGui::MenuItem(tr("Start view"), nullptr, app.presenting_start)) {
      try {
        app_load_scenario(app, "start");
      } catch (const Error& e) {  // a broken or missing checkpoint: the banner, nothing else
        app.show_banner(e.what(), true, 10.0);
      }
    }
    if (ImGui::BeginMenu(tr("Text size"))) {
      // 100 % to 300 %: fonts, spacing, panel widths and every figure's text together.
      for (int percent = 100; percent <= 300; percent += 25) {
        const std::string label = std::to_string(percent) + " %";
        const char* keys = percent == 100 ? "Ctrl 0" : nullptr;
        if (ImGui::MenuItem(label.c_str(), keys, static_cast<int>(text_scale() * 100 + 0.5f) == percent))
          set_text_scale(static_cast<float>(percent) / 100.0f);
      }
      ImGui::Separator();
      ImGui::TextDisabled("%s", tr("Ctrl + larger, Ctrl - smaller"));
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu(tr("Language"))) {
      if (ImGui::MenuItem("한국어", nullptr, ui_lang() == Lang::Ko)) ui_lang() = Lang::Ko;
      if (ImGui::MenuItem("English", nullptr, ui_lang() == Lang::En)) ui_lang() = Lang::En;
      ImGui::EndMenu();
    }
    ImGui::MenuItem(tr("Reduced motion"), nullptr, &app.playback.reduced_motion);
    const bool has_ref = app.data() && app.data()->has_reference;
    if (ImGui::MenuItem(tr("Bug lab"), nullptr, app.presenting_bug_lab, has_ref))
      app.presenting_bug_lab = !app.presenting_bug_lab;
    ImGui::MenuItem("FlashAttention (tiled)", nullptr, &app.presenting_flash);
    ImGui::MenuItem(tr("Slide view"), nullptr, &app.presenting_slide);
    if (ImGui::BeginMenu(tr("Slide theme"))) {
      if (ImGui::MenuItem(tr("Print (light)"), nullptr, app.slide_theme == "print")) app.slide_theme = "print";
      if (ImGui::MenuItem(tr("Projector (dark)"), nullptr, app.slide_theme == "projector")) app.slide_theme = "projector";
      ImGui::EndMenu();
    }
    if (app.session.scenario().decode.enabled) ImGui::MenuItem(tr("Decode"), nullptr, &app.presenting_decode);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(tr("Scenario"))) {
    for (const auto& s : all_scenarios()) {
      const std::string label =
          s.name + "  —  " + (ui_lang() == Lang::Ko ? s.title_ko : s.title_en);
      if (ImGui::MenuItem(label.c_str(), nullptr, app.session.scenario().name == s.name))
        app_load_scenario(app, s.name);
    }
    ImGui::Separator();
    for (const char* name : {"model", "model-ablate-induction"})
      if (ImGui::MenuItem(name, nullptr, app.session.scenario().name == name)) {
        try {
          app_load_scenario(app, name);
        } catch (const Error& e) {  // a broken or missing checkpoint: the banner, nothing else
          app.show_banner(e.what(), true, 10.0);
        }
      }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(tr("Help"))) {
    if (ImGui::MenuItem(tr("About attnsim"))) app.show_about = true;
    ImGui::EndMenu();
  }
  if (const Step* step = app.current_step(); step && !app.presenting_start) {
    ImGui::SameLine(ImGui::GetWindowWidth() * 0.5f);
    // The scenario and the step in words, the step's stable name after it.
    const std::string& scenario = app.session.scenario().name;  // "" for a lesson step's own run
    const std::string shown = step_display_name(step->name, ui_lang()) + " (" + step->name + ")";
    ImGui::TextDisabled("%s", scenario.empty() ? shown.c_str() : (scenario + " · " + shown).c_str());
  }
  ImGui::SameLine();
  blas_status_mark(app);
  ImGui::EndMainMenuBar();
}

}  // namespace attnsim::app
