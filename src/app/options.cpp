// Command-line options. See options.h.
#include "app/options.h"

#include "engine/checked.h"
#include "engine/error.h"

namespace attnsim::app {

const char* const kUsage =
    "usage: attnsim [--scenario NAME] [--lang ko|en] [--lesson FILE]\n"
    "       attnsim --lesson FILE --export-slides DIR [--force] [--scale 1|2|4] [--lang ko|en]\n"
    "       attnsim --export FILE.png [--scenario NAME] [--step NAME] [--scale 1|2|4]\n"
    "               [--panel window|pipeline|tensor|memory|buglab|flash|controls|model|timeline|experiments]\n"
    "               [--batch B] [--experiment NAME]\n"
    "               [--model DIR]  (scenarios model, model-ablate-induction: default\n"
    "               assets/models/induction, or $ATTNSIM_MODEL)\n"
    "               [--transparent] [--geometry FILE.json] [--progress 0..1]\n"
    "               [--action check-hidden|first-nan|try-view]\n"
    "       attnsim --export-slides DIR [--force] [--scenario NAME] [--scale 1|2|4]\n"
    "       (DIR new or empty; --force replaces a folder that is not empty)\n"
    "       attnsim --bench-frames N [--scenario NAME] [--train-live]\n"
    "       attnsim --bench-edit N [--scenario NAME]\n";

namespace {

int parse_int(const std::string& flag, const std::string& text) {
  return static_cast<int>(attnsim::parse_int(text, flag, 0, 1000000000));
}

}  // namespace

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
    } else if (a == "--export") {
      o.mode = Mode::Export;
      o.output = value();
    } else if (a == "--export-slides") {
      o.mode = Mode::ExportSlides;
      o.output = value();
    } else if (a == "--bench-frames") {
      o.mode = Mode::Bench;
      o.bench_frames = parse_int(a, value());
      if (o.bench_frames < 1) throw Error("--bench-frames needs at least 1 frame");
    } else if (a == "--bench-edit") {
      o.mode = Mode::BenchEdit;
      o.bench_edits = parse_int(a, value());
      if (o.bench_edits < 1) throw Error("--bench-edit needs at least 1 edit");
    } else if (a == "--lesson") {
      o.lesson = value();
    } else if (a == "--scenario") {
      o.scenario = value();
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
          o.panel != "experiments")
        throw Error("--panel must be window, pipeline, tensor, memory, buglab, flash, "
                    "controls, model, timeline or experiments, got '" + o.panel + "'");
    } else if (a == "--model") {
      o.model = value();
    } else if (a == "--batch") {
      o.batch = parse_int(a, value());
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
      if (o.action != "check-hidden" && o.action != "first-nan" && o.action != "try-view")
        throw Error("--action must be check-hidden, first-nan or try-view, got '" + o.action + "'");
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
  return o;
}

}  // namespace attnsim::app
