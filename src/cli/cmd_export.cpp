// `slides`, `figure` and `animate`: the app's figure exports (views/slide_export.h) without
// the GUI binary, for machines with no display and no OpenGL (CI, a server making a deck).
// The options after the output are the app's own (views/options.h: --lesson, --scenario,
// --step, --panel, --format, --theme, --size, --scale, --lang, --from, --to, ...), parsed by
// the app's one parser, so a flag means the same in both programs:
//   attnsim-cli slides DIR [--lesson FILE | --scenario NAME] [--format png|svg|pdf] [--force]
//   attnsim-cli figure FILE.{png,svg,pdf} [--scenario NAME] [--step NAME] [--panel NAME]
//   attnsim-cli animate FILE.gif | DIR --from STEP --to STEP [--fps N] [--seconds S]
#include <memory>

#include "commands.h"
#include "engine/error.h"
#include "views/options.h"
#include "views/slide_export.h"

namespace attnsim::cli {

namespace {

struct ExportArgs {
  std::string out;
};

// One subcommand: OUT, then the app's options verbatim.
CLI::App* add_export(CLI::App& app, const char* name, const char* help, ExportArgs& a) {
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("out", a.out, "where the export goes")->required();
  cmd->allow_extras();  // handed to the app's parser below, which names any it does not know
  return cmd;
}

app::Options parse_app_options(std::vector<std::string> head, CLI::App* cmd) {
  for (const std::string& extra : cmd->remaining()) head.push_back(extra);
  return app::parse_options(head);
}

// A flag of the window's own modes (--bench-frames, --print-trace, ...) would change what runs.
void expect_mode(const app::Options& o, app::Mode mode, const char* command) {
  if (o.mode != mode) throw Error(std::string(command) + ": that option is the window's (run it with attnsim)");
}

}  // namespace

namespace {

Runner add_slides_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = add_export(app, "slides", "a lesson's or scenario's slides into a folder (png, svg or one pdf), "
                             "with index.md and index.html; the app's options follow", *a);
  return [a, cmd] {
    const app::Options o = parse_app_options({"--export-slides", a->out}, cmd);
    expect_mode(o, app::Mode::ExportSlides, "slides");
    return app::run_slides_export(o);
  };
}

Runner add_figure_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = add_export(app, "figure", "one step or panel as a slide (.png, .svg or .pdf); the app's options follow", *a);
  return [a, cmd] {
    // --slide: a PNG drawn through the figure sinks (Cairo), not a window capture.
    const app::Options o = parse_app_options({"--export", a->out, "--slide"}, cmd);
    expect_mode(o, app::Mode::Export, "figure");
    return app::run_figure_export(o);
  };
}

Runner add_animate_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = add_export(app, "animate", "a transition as an animated .gif, or its frames into a folder; "
                             "the app's options follow (--from STEP --to STEP)", *a);
  return [a, cmd] {
    const bool gif = a->out.size() > 4 && a->out.compare(a->out.size() - 4, 4, ".gif") == 0;
    const app::Mode mode = gif ? app::Mode::ExportGif : app::Mode::ExportFrames;
    const app::Options o = parse_app_options({gif ? "--export-gif" : "--export-frames", a->out}, cmd);
    expect_mode(o, mode, "animate");
    return app::run_animation_export(o);
  };
}

}  // namespace

std::vector<Command> add_export_commands(CLI::App& app) {
  std::vector<Command> list;
  for (auto add : {add_slides_command, add_figure_command, add_animate_command}) {
    Runner run = add(app);
    list.push_back({app.get_subcommands({}).back(), std::move(run)});
  }
  return list;
}

}  // namespace attnsim::cli
