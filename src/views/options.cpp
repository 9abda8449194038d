// Command-line options. See options.h.
#include "views/options.h"

#include "engine/checked.h"
#include "engine/error.h"

namespace attnsim::app {

const char* const kUsage =
    "usage: attnsim [--scenario NAME] [--lang ko|en] [--lesson FILE [--at N]] [--ui-scale 1..3]\n"
    "       (no --scenario, --lesson or --model: the start view; --scenario default: the article's example)\n"
    "       attnsim --version   the version, and the BLAS kernels in use with advice when they are slow\n"
    "       (--at N: the lesson's step N, 1 for the first, as the page's #lesson=ID&at=N; the figures\n"
    "       fill in as the engine computes them, and --export waits for the step's own)\n"
    "       attnsim --lesson FILE --export-slides DIR [--force] [--scale 1|2|4] [--lang ko|en]\n"
    "       attnsim --export FILE.png [--scenario NAME | --lesson FILE [--at N]] [--step NAME] [--scale 1|2|4]\n"
    "               [--panel window|pipeline|tensor|memory|buglab|flash|decode|controls|model|timeline|experiments|slide]\n"
    "               [--batch B] [--head H] (buglab) [--experiment NAME]\n"
    "               [--model DIR]  (scenarios model, model-ablate-induction: default\n"
    "               assets/models/wordnet-lm-s1; decode-model, decode-model-sinks: default\n"
    "               assets/models/induction; either, $ATTNSIM_MODEL when set)\n"
    "               [--layer L] [--ablate 1.2,0.3] [--text \"...\"]  (the model scenario; --model DIR\n"
    "               may be a Hugging Face folder: config.json, model.safetensors, tokenizer)\n"
    "               [--transparent] [--geometry FILE.json] [--progress 0..1]\n"
    "               [--action check-hidden|first-nan|try-view|measure-flash|show-contribution|\n"
    "                         open-overview|open-sampling|open-lens]\n"
    "               [--click X,Y]\n"
    "       attnsim --export FILE.svg|FILE.pdf|FILE.png --slide [--scenario NAME] [--step NAME]\n"
    "               [--panel tensor|buglab|flash|memory] [--batch B] [--head H] [--theme print|projector]\n"
    "               [--size WxH]  (model scenarios: --panel model|timeline|experiments --experiment NAME\n"
    "               | sampling [--temperature T] [--top-k K] [--top-p P] [--seed S] | overview | lens)\n"
    "       attnsim --export-slides DIR [--force] [--scenario NAME | --lesson FILE] [--format png|svg|pdf]\n"
    "               [--theme print|projector] [--size 1280x720|1920x1080] [--scale 1|2|4]\n"
    "       (DIR new or empty; --force replaces a folder that is not empty)\n"
    "       attnsim --export-gif FILE.gif | --export-frames DIR [--scenario NAME] --from STEP\n"
    "               --to STEP [--fps N] [--seconds S] [--reduced-motion] [--theme ...] [--size WxH]\n"
    "       attnsim --export-gif FILE.gif | --export-frames DIR --panel flash [--scenario NAME]\n"
    "               (the flash tiles advancing: one frame per tile event of head 0)\n"
    "       attnsim --export-gif FILE.gif | --export-frames DIR --panel decode --scenario DECODE\n"
    "               [--from CALL] [--to CALL] (each call's K/V rows flying into the cache)\n"
    "       attnsim --export-gif FILE.gif | --export-frames DIR --panel sampling|overview [--model DIR]\n"
    "               [--text ...] [--top-k K] [--top-p P] [--seed S] (the temperature swept from 0.25 to 2;\n"
    "               the residual stream walked block by block)\n"
    "       attnsim --bench-frames N [--scenario NAME] [--train-live] [--panel slide]\n"
    "       (--export and --bench-frames draw a WxH window, --window WxH, default 1280x800, at --ui-scale S)\n"
    "       attnsim --bench-edit N [--scenario NAME]\n"
    "       attnsim --print-trace [--scenario NAME]   the trace as JSON (attnsim-cli trace --json), no window\n";

namespace {

int parse_int(const std::string& flag, const std::string& text) {
  return static_cast<int>(attnsim::parse_int(text, flag, 0, 1000000000));
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

bool Options::figure_export() const {
  // The sampling chart and the overview are figures only: a .png of them is their slide.
  return mode == Mode::Export &&
         (slide || panel == "sampling" || panel == "overview" || panel == "lens" || ends_with(output, ".svg") || ends_with(output, ".pdf"));
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw Error(a + " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      o.mode = Mode::Help;
    } else if (a == "--version") {
      o.mode = Mode::Version;
    } else if (a == "--ui-scale") {
      const std::string& v = value();
      float x = 0;
      try {
        size_t used = 0;
        x = std::stof(v, &used);
        if (used != v.size()) x = 0;
      } catch (const std::exception&) {
        x = 0;
      }
      if (!(x >= 1.0f && x <= 3.0f)) throw Error("--ui-scale expects a number from 1 to 3 (1 = 100 %), got '" + v + "'");
      o.ui_scale = x;
    } else if (a == "--window") {
      const std::string& v = value();
      const auto x = v.find('x');
      const int w = x == std::string::npos ? 0 : parse_int(a, v.substr(0, x));
      const int h = x == std::string::npos ? 0 : parse_int(a, v.substr(x + 1));
      if (w < 640 || h < 480 || w > 7680 || h > 4320)
        throw Error("--window takes WxH from 640x480 to 7680x4320 (e.g. 1280x720), got '" + v + "'");
      o.window_width = w;
      o.window_height = h;
    } else if (a == "--export") {
      o.mode = Mode::Export;
      o.output = value();
    } else if (a == "--export-slides") {
      o.mode = Mode::ExportSlides;
      o.output = value();
    } else if (a == "--export-gif") {
      o.mode = Mode::ExportGif;
      o.output = value();
      if (!ends_with(o.output, ".gif")) throw Error("--export-gif writes a .gif file, got '" + o.output + "'");
    } else if (a == "--export-frames") {
      o.mode = Mode::ExportFrames;
      o.output = value();
    } else if (a == "--slide") {
      o.slide = true;
    } else if (a == "--format") {
      o.format = value();
      if (o.format != "png" && o.format != "svg" && o.format != "pdf")
        throw Error("--format must be png, svg or pdf, got '" + o.format + "'");
    } else if (a == "--theme") {
      o.theme = value();
      if (o.theme != "print" && o.theme != "projector")
        throw Error("--theme must be print or projector, got '" + o.theme + "'");
    } else if (a == "--size") {
      const std::string& v = value();
      const auto x = v.find('x');
      const int w = x == std::string::npos ? 0 : parse_int(a, v.substr(0, x));
      const int h = x == std::string::npos ? 0 : parse_int(a, v.substr(x + 1));
      if (w < 320 || w > 7680 || static_cast<int64_t>(w) * 9 != static_cast<int64_t>(h) * 16)
        throw Error("--size must be 16:9, from 320x180 to 7680x4320 (e.g. 1280x720, 1920x1080), got '" + v + "'");
      o.width = w;
      o.height = h;
    } else if (a == "--from") {
      o.from = value();
    } else if (a == "--to") {
      o.to = value();
    } else if (a == "--fps") {
      o.fps = parse_int(a, value());
      if (o.fps < 1 || o.fps > 50) throw Error("--fps must be 1 to 50, got " + std::to_string(o.fps));
    } else if (a == "--seconds") {
      const std::string& v = value();
      try {
        o.seconds = std::stof(v);
      } catch (const std::exception&) {
        o.seconds = -1;
      }
      if (!(o.seconds >= 0.5f && o.seconds <= 60.0f))
        throw Error("--seconds expects a number from 0.5 to 60, got '" + v + "'");
    } else if (a == "--reduced-motion") {
      o.reduced_motion = true;
    } else if (a == "--bench-frames") {
      o.mode = Mode::Bench;
      o.bench_frames = parse_int(a, value());
      if (o.bench_frames < 1) throw Error("--bench-frames needs at least 1 frame");
    } else if (a == "--bench-edit") {
      o.mode = Mode::BenchEdit;
      o.bench_edits = parse_int(a, value());
      if (o.bench_edits < 1) throw Error("--bench-edit needs at least 1 edit");
    } else if (a == "--print-trace") {
      o.mode = Mode::PrintTrace;
    } else if (a == "--lesson") {
      o.lesson = value();
    } else if (a == "--at") {
      const std::string& v = value();
      try {
        o.lesson_at = static_cast<int>(attnsim::parse_int(v, a, 1, 1000000));
      } catch (const Error&) {
        throw Error("--at takes a step number of the lesson, 1 for its first step, got '" + v + "'");
      }
    } else if (a == "--scenario") {
      o.scenario = value();
      o.scenario_given = true;
    } else if (a == "--step") {
      o.step = value();
    } else if (a == "--scale") {
      o.scale = parse_int(a, value());
      if (o.scale != 1 && o.scale != 2 && o.scale != 4)
        throw Error("--scale must be 1, 2 or 4, got " + std::to_string(o.scale));
    } else if (a == "--panel") {
      o.panel = value();
      if (o.panel != "window" && o.panel != "pipeline" && o.panel != "tensor" &&
          o.panel != "memory" && o.panel != "buglab" && o.panel != "controls" &&
          o.panel != "flash" && o.panel != "model" && o.panel != "timeline" &&
          o.panel != "experiments" && o.panel != "slide" && o.panel != "decode" && o.panel != "sampling" &&
          o.panel != "overview" && o.panel != "lens")
        throw Error("--panel must be window, pipeline, tensor, memory, buglab, flash, decode, "
                    "controls, model, timeline, experiments, sampling, overview, lens or slide, got '" + o.panel + "'");
    } else if (a == "--temperature" || a == "--top-p") {
      const std::string& v = value();
      double x = -1;
      try {
        x = std::stod(v);
      } catch (const std::exception&) {
        throw Error(a + " expects a number, got '" + v + "'");
      }
      (a == "--temperature" ? o.temperature : o.top_p) = x;
    } else if (a == "--top-k") {
      o.top_k = parse_int(a, value());
    } else if (a == "--seed") {
      o.seed = parse_int(a, value());
    } else if (a == "--model") {
      o.model = value();
    } else if (a == "--click") {
      const std::string& v = value();
      const size_t comma = v.find(',');
      if (comma == std::string::npos) throw Error("--click takes X,Y in window pixels, got '" + v + "'");
      o.click_x = static_cast<float>(parse_int(a, v.substr(0, comma)));
      o.click_y = static_cast<float>(parse_int(a, v.substr(comma + 1)));
    } else if (a == "--layer") {
      o.layer = parse_int(a, value());
    } else if (a == "--ablate") {
      o.ablate = value();
    } else if (a == "--text") {
      o.text = value();
      if (o.text.empty()) throw Error("--text needs some text");
    } else if (a == "--batch") {
      o.batch = parse_int(a, value());
    } else if (a == "--head") {
      o.head = parse_int(a, value());
    } else if (a == "--geometry") {
      o.geometry = value();
    } else if (a == "--lang") {
      o.lang = value();
      if (o.lang != "ko" && o.lang != "en") throw Error("--lang must be ko or en");
    } else if (a == "--progress") {
      const std::string& v = value();
      try {
        o.progress = std::stof(v);
      } catch (const std::exception&) {
        throw Error("--progress expects a number from 0 to 1, got '" + v + "'");
      }
      if (!(o.progress >= 0.0f && o.progress <= 1.0f))
        throw Error("--progress expects a number from 0 to 1, got '" + v + "'");
    } else if (a == "--action") {
      o.action = value();
      if (o.action != "check-hidden" && o.action != "first-nan" && o.action != "try-view" && o.action != "measure-flash" &&
          o.action != "show-contribution" && o.action != "open-overview" && o.action != "open-sampling" &&
          o.action != "open-lens")
        throw Error("--action must be check-hidden, first-nan, try-view, measure-flash, show-contribution, "
                    "open-overview, open-sampling or open-lens, got '" +
                    o.action + "'");
    } else if (a == "--experiment") {
      o.experiment = value();
    } else if (a == "--train-live") {
      o.train_live = true;
    } else if (a == "--transparent") {
      o.transparent = true;
    } else if (a == "--force") {
      o.force = true;
    } else {
      throw Error("unknown argument '" + a + "'");
    }
  }
  if (o.mode == Mode::Export && !ends_with(o.output, ".png") && !ends_with(o.output, ".svg") &&
      !ends_with(o.output, ".pdf"))
    throw Error("--export writes .png, .svg or .pdf (by the file's extension), got '" + o.output + "'");
  // A vector file or --slide draws a figure; the pipeline list and the controls are widgets.
  if (o.figure_export() && (o.panel == "pipeline" || o.panel == "controls"))
    throw Error("--panel " + o.panel + " is widgets, not a figure: export it as .png without --slide");
  // --panel flash animates the tile walk (one frame per tile event): no steps to name;
  // --panel decode animates decode calls (--from / --to are call numbers, all by default).
  // --panel sampling sweeps the temperature, --panel overview walks the stream (whole_slides.h).
  if ((o.mode == Mode::ExportGif || o.mode == Mode::ExportFrames) && o.panel != "flash" && o.panel != "decode" &&
      o.panel != "sampling" && o.panel != "overview" && (o.from.empty() || o.to.empty()))
    throw Error("--export-gif and --export-frames need --from STEP and --to STEP (or --panel flash, decode, sampling "
                "or overview)");
  if (o.lesson_at > 0 && o.lesson.empty()) throw Error("--at N opens step N of a lesson: give --lesson FILE too");
  if (o.lesson_at > 0 && o.mode != Mode::Window && o.mode != Mode::Export)
    throw Error("--at opens one step: it goes with the window or --export, not with every step's export");
  if (static_cast<int64_t>(o.fps) * static_cast<int64_t>(o.seconds) > 1200)
    throw Error("--fps x --seconds gives more than 1200 frames");
  return o;
}

}  // namespace attnsim::app
