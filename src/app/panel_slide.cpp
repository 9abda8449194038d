// Slide view: the current step as the slide `attnsim --export` writes — the same figure
// (slide_scenes.h) drawn through the ImGui sink (figure_imgui.h). View > Slide view shows it
// in the centre; View > Slide theme switches print / projector; File > Export slide writes
// it as PNG, SVG or PDF through the file sinks, never through a screenshot.
#include <chrono>
#include <cstdio>
#include <memory>

#include "app/app.h"
#include "app/figure_imgui.h"
#include "app/platform.h"
#include "views/flash_slides.h"
#include "views/i18n.h"
#include "views/model_slides.h"
#include "views/model_view.h"
#include "views/slide_scenes.h"
#include "engine/error.h"
#include "figure/svg_sink.h"
#include "views/tasks.h"

namespace attnsim::app {

namespace {

// The figure for what is on screen, rebuilt only when one of its inputs changes.
struct SlideCache {
  uint64_t generation = 0;
  std::string step, theme, panel;  // panel: "tensor", "buglab" or the flash panel's state
  int64_t batch = -1;
  Lang lang = Lang::En;
  std::shared_ptr<const figure::Figure> figure;
  std::string error;
};

SlideCache& cache() {
  static SlideCache c;
  return c;
}

// The trained model's slide (its head grid with the heads knocked out now, and the loss and
// accuracy bars on the evaluation batch) costs a pass over 128 sequences per new set of
// knocked-out heads: it is built on a worker from a copy of the model view, and the slide
// on screen stays until the new one lands, so a toggle never stalls a frame. One build at a
// time; a change made meanwhile starts the next one when it lands.
struct ModelSlideJob {
  std::string key;  // what `building` was started for
  Task<std::shared_ptr<const figure::Figure>> building;
  uint64_t revision = 0;  // the model view's revision when `key` was taken
  std::string shown_key;  // what `figure` shows
  std::shared_ptr<const figure::Figure> figure;
  std::string error;
};

ModelSlideJob& model_job() {
  static ModelSlideJob j;
  return j;
}

ModelSlideText model_slide_text(const App& app) {
  ModelSlideText text;
  text.title = tr("The trained model: its head grid");
  text.lang = panel_lang();
  text.theme = app.slide_theme;
  text.footer = "attnsim · " + checkpoint_name(app.model->dir()) + " · " + (ui_lang() == Lang::Ko ? "단계 " : "step ") +
                std::to_string(app.model->step());
  return text;
}

// The view's weights, sequence and ablation, the theme and the language.
std::string model_slide_key(const App& app) {
  return std::to_string(app.model->load_id()) + "|" + std::to_string(app.model->revision()) + "|" + app.slide_theme +
         "|" + (ui_lang() == Lang::Ko ? "ko" : "en");
}

// Takes a finished build, starts one for what is on screen now when it differs.
void poll_model_slide(App& app) {
  ModelSlideJob& j = model_job();
  if (j.building.valid() && j.building.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      j.figure = j.building.get();
      want_figure_glyphs(*j.figure);
      j.error.clear();
    } catch (const std::exception& e) {  // Error: a bad checkpoint; anything else: the worker failed
      j.figure.reset();
      j.error = e.what();
    }
    j.shown_key = j.key;
  }
  const std::string key = model_slide_key(app);
  if (j.building.valid() || key == j.shown_key) return;
  auto view = std::make_shared<const ModelView>(*app.model);  // the worker's own copy
  j.key = key;
  j.revision = app.model->revision();
  j.building = start_task([view, text = model_slide_text(app)] {
    return std::make_shared<const figure::Figure>(head_grid_slide(*view, text).figure);
  });
}

const figure::Figure* current_slide(App& app, std::string* error) {
  if (app.model && app.model->loaded()) {
    poll_model_slide(app);
    *error = model_job().error;
    return model_job().figure.get();
  }
  const RunData* d = app.data();
  const Step* s = app.current_step();
  if (!d || !s) return nullptr;
  // The flash panel in the centre: its slide at the panel's own head, blocks and event.
  FlashPanelView fv;
  const bool flash = app.presenting_flash && flash_panel_view(app, &fv) && fv.generation == d->generation;
  const std::string panel = flash ? "flash" : app.presenting_bug_lab && d->has_reference ? "buglab" : "tensor";
  const std::string key = flash ? "flash|" + std::to_string(fv.batch) + "|" + std::to_string(fv.head) + "|" +
                                      std::to_string(fv.block_q) + "x" + std::to_string(fv.block_k) + "|" +
                                      std::to_string(fv.event)
                                : panel == "buglab" ? "buglab|" + std::to_string(app.buglab_head) : panel;
  SlideCache& c = cache();
  if (!c.figure || c.generation != d->generation || c.step != s->name || c.batch != app.batch ||
      c.theme != app.slide_theme || c.lang != ui_lang() || c.panel != key) {
    c = SlideCache{d->generation, s->name, app.slide_theme, key, app.batch, ui_lang(), nullptr, ""};
    SlideView v;
    v.step = s->name;
    v.batch = app.batch;
    v.panel = panel;
    v.lang = panel_lang();
    v.theme = app.slide_theme;
    v.head = app.buglab_head;  // the bug lab's triptych: the panel's head (flash sets its own below)
    try {
      if (flash) {
        v.batch = fv.batch;
        v.head = fv.head;
        const FlashCoreResult core = flash_tile_trace(*d, fv.batch, fv.head, fv.block_q, fv.block_k);
        c.figure = std::make_shared<const figure::Figure>(flash_slide(app.session.scenario(), *d, core, fv.block_q,
                                                                      fv.block_k, static_cast<size_t>(fv.event), v));
      } else {
        c.figure = std::make_shared<const figure::Figure>(step_slide(app.session.scenario(), *d, v));
      }
      want_figure_glyphs(*c.figure);
    } catch (const Error& e) {
      c.error = e.what();
    }
  }
  *error = c.error;
  return c.figure.get();
}

}  // namespace

void panel_slide(App& app, const ImVec4& rect) {
  if (begin_panel(app, "slide", tr("Slide"), rect)) {
    std::string error;
    const figure::Figure* f = current_slide(app, &error);
    if (!error.empty()) ImGui::TextWrapped("%s", error.c_str());
    if (f) {
      // Letterboxed 16:9 in the panel's content region.
      const ImVec2 at = ImGui::GetCursorScreenPos(), room = ImGui::GetContentRegionAvail();
      const float scale = std::max(0.05f, std::min(room.x / f->width, room.y / f->height));
      const ImVec2 origin{at.x + (room.x - f->width * scale) / 2, at.y + (room.y - f->height * scale) / 2};
      draw_figure(ImGui::GetWindowDrawList(), *f, origin, scale, Backdrop::Drawn);
    }
  }
  end_panel();
}

uint64_t slide_model_revision(const App& app) {
  if (!app.model || !app.model->loaded()) return 0;
  const ModelSlideJob& j = model_job();
  return j.building.valid() || j.shown_key != model_slide_key(app) ? 0 : j.revision;
}

void wait_model_slide(App& app) {
  if (!app.model || !app.model->loaded()) return;
  for (int i = 0; i < 2; ++i) {  // the build in flight, then one for what is on screen now
    poll_model_slide(app);
    if (model_job().building.valid()) model_job().building.wait();
  }
  poll_model_slide(app);
}

bool export_slide(App& app, const std::string& extension, std::string* written, std::string* error) {
  if (app.model && app.model->loaded()) wait_model_slide(app);  // the file shows what is on screen now
  const figure::Figure* f = current_slide(app, error);
  if (!f) {
    if (error->empty()) *error = "nothing to export yet";
    return false;
  }
  *written = export_path(app.session.scenario().name + "-" + app.current_step()->name + "-slide." + extension);
  const int width = 1920 * app.export_scale;
  bool ok = false;
  if (extension == "svg") {
    ok = figure::write_svg(*f, *written, width, error);
  } else {
    ok = write_cairo_figure(*f, extension, *written, width, error);
  }
  return ok && deliver_export(*written, error);
}

}  // namespace attnsim::app
