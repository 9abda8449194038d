// Figure exports without a window. See slide_export.h.
#include "views/slide_export.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "views/flash_slides.h"
#include "views/decode_slides.h"
#include "views/gif_scenes.h"
#include "views/hf_view.h"
#include "views/model_slides.h"
#include "views/model_view.h"
#include "views/slide_scenes.h"
#include "views/whole_slides.h"
#include "engine/atomic_file.h"
#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/mha.h"
#include "engine/scenario.h"
#include "figure/cairo_sink.h"
#include "figure/gif_writer.h"
#include "figure/svg_sink.h"

namespace attnsim::app {

namespace fs = std::filesystem;

namespace {

lessons::Lang lang_of(const Options& o) {
  if (!o.lang.empty()) return lessons::parse_lang(o.lang);
  const char* env = std::getenv("LANG");
  return env && std::string(env).rfind("ko", 0) == 0 ? lessons::Lang::Ko : lessons::Lang::En;
}

int pixel_width(const Options& o) { return o.width * o.scale; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// One figure to one file, by extension.
bool write_one(const figure::Figure& f, const std::string& path, int width, std::string* error) {
  if (ends_with(path, ".svg")) return figure::write_svg(f, path, width, error);
  if (ends_with(path, ".pdf")) return figure::write_pdf({f}, path, f.title, error);
  return figure::write_png(f, path, width, error);
}

std::string html_escape(const std::string& t) {
  std::string o;
  for (char c : t) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

// index.html: the slides in order, one per screen, ←/→ or space to move; works offline.
std::string index_html(const Deck& deck, const std::vector<std::string>& files, bool pdf) {
  std::string h = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(deck.title) +
                  "</title>\n<style>body{margin:0;background:#222;color:#eee;font-family:NanumGothic,sans-serif}"
                  "section{height:100vh;display:flex;align-items:center;justify-content:center}"
                  "img,embed{max-width:100vw;max-height:100vh}</style></head><body>\n";
  if (pdf) {
    h += "<section><embed src=\"" + html_escape(files.front()) + "\" type=\"application/pdf\" width=\"100%\" "
         "height=\"100%\"></section>\n<p><a href=\"" + html_escape(files.front()) + "\">" +
         html_escape(files.front()) + "</a></p>\n";
  } else {
    for (size_t i = 0; i < files.size(); ++i)
      h += "<section id=\"s" + std::to_string(i) + "\"><img src=\"" + html_escape(files[i]) + "\" alt=\"" +
           html_escape(deck.pages[i].title) + "\"></section>\n";
    h += "<script>let i=0;const n=" + std::to_string(files.size()) +
         ";document.addEventListener('keydown',e=>{if(e.key==='ArrowRight'||e.key===' ')i=Math.min(n-1,i+1);"
         "else if(e.key==='ArrowLeft')i=Math.max(0,i-1);else return;"
         "document.getElementById('s'+i).scrollIntoView();e.preventDefault();});</script>\n";
  }
  return h + "</body></html>\n";
}

}  // namespace

int run_figure_export(const Options& o) {
  try {
    if (o.panel == "sampling" || o.panel == "overview" || o.panel == "lens") {
      std::string error;
      const Lang lang = lang_of(o) == lessons::Lang::Ko ? Lang::Ko : Lang::En;
      if (!write_one(whole_slide(o, lang), o.output, pixel_width(o), &error)) throw Error(error);
      std::printf("%s\n", o.output.c_str());
      return 0;
    }
    if (is_model_scenario(o.scenario) && is_hf_folder(o.model)) {
      // A Hugging Face folder: the chosen layer's step (--layer, --ablate, --text) as its slide.
      const auto view = open_hf_view(o.model, o.text, o.layer, o.ablate);
      const auto data = view->run_data();
      Scenario scenario;
      scenario.name = o.scenario;
      // The model's name, not its folder: a slide shows no path.
      scenario.title_en = checkpoint_name(o.model) + ", layer " + std::to_string(view->layer());
      scenario.title_ko = checkpoint_name(o.model) + ", 레이어 " + std::to_string(view->layer());
      scenario.focus_step = "alpha";
      scenario.config = data->config;
      SlideView v;
      v.step = o.step;
      v.batch = o.batch;
      v.panel = o.panel == "memory" ? "memory" : "tensor";
      v.head = o.head;
      v.lang = lang_of(o);
      v.theme = o.theme;
      std::string error;
      if (!write_one(step_slide(scenario, *data, v), o.output, pixel_width(o), &error)) throw Error(error);
      std::printf("%s\n", o.output.c_str());
      return 0;
    }
    if (is_model_scenario(o.scenario)) {
      const figure::Figure f = o.panel == "experiments" ? model_experiment_slide(o.experiment, o.model, lang_of(o), o.theme)
                               : o.panel == "timeline"  ? model_timeline_slide(o.scenario, o.model, lang_of(o), o.theme)
                                                        : model_scenario_slide(o.scenario, o.model, lang_of(o), o.theme);
      std::string error;
      if (!write_one(f, o.output, pixel_width(o), &error)) throw Error(error);
      std::printf("%s\n", o.output.c_str());
      return 0;
    }
    const Scenario& scenario = find_scenario(o.scenario);
    const auto run = compute_run(scenario);
    SlideView v;
    v.step = o.step;
    v.batch = o.batch;
    v.panel = o.panel == "buglab" || o.panel == "flash" || o.panel == "memory" ? o.panel : "tensor";
    v.head = o.head;
    v.lang = lang_of(o);
    v.theme = o.theme;
    if (v.panel == "buglab" && !scenario.has_reference) throw Error("scenario '" + o.scenario + "' has no bug lab");
    const figure::Figure f = step_slide(scenario, *run, v);
    std::string error;
    if (!write_one(f, o.output, pixel_width(o), &error)) throw Error(error);
    std::printf("%s\n", o.output.c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
    return 2;
  }
}

int run_slides_export(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  Deck deck;
  try {
    if (!o.lesson.empty()) {
      auto loaded = lessons::load_lesson(o.lesson);
      if (!loaded.lesson) {
        for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.str().c_str());
        throw Error("cannot read lesson " + o.lesson + " (check it with attnsim-cli lesson check)");
      }
      deck = lesson_deck(*loaded.lesson, lang_of(o), o.theme);
    } else {
      deck = scenario_deck(o.scenario, lang_of(o), o.theme, o.model);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
    return 2;
  }
  // Every page, index.md and index.html go to a hidden folder renamed into place at the end
  // (engine/atomic_file.h): a failed write leaves nothing behind, an existing folder untouched.
  std::vector<std::string> files;
  try {
    write_folder_atomically(o.output, [&](const std::string& tmp_dir) {
      const fs::path dir(tmp_dir);
      std::string error;
      if (o.format == "pdf") {
        std::vector<figure::Figure> pages;
        for (const auto& p : deck.pages) pages.push_back(p.figure);
        if (!figure::write_pdf(pages, (dir / "lesson.pdf").string(), deck.title, &error)) throw Error(error);
        files.push_back("lesson.pdf");
      } else {
        for (const auto& p : deck.pages) {
          const std::string name = p.name + "." + o.format;
          if (!write_one(p.figure, (dir / name).string(), pixel_width(o), &error)) throw Error(error);
          files.push_back(name);
        }
      }
      std::string index = "# " + deck.title + "\n\n";
      for (size_t i = 0; i < deck.pages.size(); ++i) {
        const std::string& file = files[o.format == "pdf" ? 0 : i];
        index += std::to_string(i) + ". **" + deck.pages[i].title + "** — " +
                 (o.format == "pdf" ? "[" + file + "](" + file + "), page " + std::to_string(i + 1)
                                    : "![" + deck.pages[i].name + "](" + file + ")") +
                 "\n\n";
      }
      write_file_atomically((dir / "index.md").string(), index);
      write_file_atomically((dir / "index.html").string(), index_html(deck, files, o.format == "pdf"));
    }, o.force);
  } catch (const Error& e) {
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
    return 2;
  }
  const fs::path dir(o.output);
  for (const auto& f : files) std::printf("%s\n", (dir / f).string().c_str());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "attnsim: %zu pages in %.0f ms\n", deck.pages.size(), ms);
  return 0;
}

int run_animation_export(const Options& o) {
  try {
    const bool whole = o.panel == "sampling" || o.panel == "overview";  // a model folder's, no scenario
    const Scenario& scenario = find_scenario(whole ? "default" : o.scenario);
    AnimationSpec spec;
    spec.from = o.from;
    spec.to = o.to;
    spec.batch = o.batch;
    spec.fps = o.fps;
    spec.seconds = o.seconds;
    spec.reduced_motion = o.reduced_motion;
    spec.lang = lang_of(o);
    spec.theme = o.theme;
    // A GIF holds every frame's pixels (RGBA + palette indices, 5 bytes) until its one palette
    // is made, and the frames as figures until each is drawn: both are predicted and refused
    // over the limit before they are made.
    const int width = pixel_width(o), height = figure::pixel_height(figure::Figure{}, width);  // slides are 16:9
    const int64_t limit = effective_mem_limit(MhaConfig{});
    auto refuse_over = [&](int frames, int64_t figure_bytes) {
      const int64_t pixels = o.mode == Mode::ExportGif ? (Size(frames) * Size(width) * Size(height) * Size(5)).value() : 0;
      const int64_t need = (Size(figure_bytes) + Size(pixels)).value();
      if (need > limit)
        throw Error("this animation needs " + human_bytes(need) + " (" + std::to_string(frames) + " frames of " +
                    std::to_string(width) + " x " + std::to_string(height) + "), over the limit of " +
                    human_bytes(limit) + " (75% of physical memory); lower --fps, --seconds or --scale");
    };
    std::shared_ptr<const RunData> run;
    if (o.panel != "decode" && !whole) run = compute_run(scenario);
    const bool steps = o.panel != "decode" && o.panel != "flash" && !whole;  // a step-to-step move
    if (steps) {
      const AnimationCost cost = animation_cost(*run, spec);
      refuse_over(cost.frames, cost.figure_bytes);
    }
    Animation anim = whole ? whole_animation(o, lang_of(o) == lessons::Lang::Ko ? Lang::Ko : Lang::En)
                     : o.panel == "decode" ? decode_animation(scenario, spec, o.model)
                     : o.panel == "flash"  ? flash_animation(scenario, *run, spec)
                                           : make_animation(scenario, *run, spec);
    // Tile events and decode calls are counted only by making them (their figures are small).
    if (!steps) refuse_over(static_cast<int>(anim.frames.size()), 0);
    std::string error;
    if (o.mode == Mode::ExportFrames) {
      write_folder_atomically(o.output, [&](const std::string& tmp_dir) {
        for (size_t i = 0; i < anim.frames.size(); ++i) {
          char name[32];
          std::snprintf(name, sizeof name, "frame-%04zu.png", i + 1);
          if (!figure::write_png(anim.frames[i], (fs::path(tmp_dir) / name).string(), width, &error))
            throw Error(error);
        }
      }, o.force);
      std::printf("%s: %zu frames\n", o.output.c_str(), anim.frames.size());
      return 0;
    }
    std::vector<figure::GifFrame> frames;
    for (size_t i = 0; i < anim.frames.size(); ++i) {
      frames.push_back({figure::render_rgba(anim.frames[i], width), anim.delay_cs[i]});
      anim.frames[i] = {};  // drawn: its figure is not needed again
    }
    if (!figure::write_gif(o.output, width, height, frames, &error))
      throw Error(error);
    std::printf("%s: %zu frames\n", o.output.c_str(), frames.size());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
    return 2;
  }
}

}  // namespace attnsim::app
