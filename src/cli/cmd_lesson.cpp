// attnsim-cli lesson: check lesson files against the engine, list them.
//
//   attnsim-cli lesson check [FILES or DIRS] [--value-cache FILE]   (default: lessons/)
//   attnsim-cli lesson list  [DIR]
//   attnsim-cli lesson show  FILE [--lang ko|en]
// check prints one line per problem as file:line:column: message and exits 2 on any; with
// --value-cache it also writes every trained-model value it computed, keyed as the app reads
// them (model_quantity.h), once the check passed (tools/web.sh puts the file in the page).
// show prints a lesson's text as the learner reads it: every {value:...} filled by the
// engine, quoted figures between «», markup removed.
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "options.h"
#include "engine/error.h"
#include "lessons/lesson.h"
#include "lessons/markup.h"
#include "lessons/model_quantity.h"
#include "model/formats/checkpoint.h"

namespace attnsim::cli {

namespace {

struct LessonOptions {
  std::vector<std::string> check_paths;
  std::string list_dir;
  std::string show_file;
  std::string show_lang = "en";
  std::string value_cache;  // check: write the model values here when the check passes
  bool quiet = false;
};

std::vector<std::string> default_paths() {
  const std::string dir = lessons::default_lesson_dir();
  if (dir.empty()) throw Error("no lessons folder found: give lesson files or a folder");
  return {dir};
}

int run_check(const LessonOptions& o) {
  const auto files = lessons::lesson_files(o.check_paths.empty() ? default_paths() : o.check_paths);
  // The values go to a scratch file beside FILE as they are computed, from an empty start (so
  // each is recomputed), and become FILE only when every lesson agreed.
  namespace fs = std::filesystem;
  const std::string scratch = o.value_cache.empty() ? "" : o.value_cache + ".partial";
  if (!scratch.empty()) {
    std::error_code ec;
    const fs::file_status target = fs::symlink_status(o.value_cache, ec);
    if (fs::exists(target) && !fs::is_regular_file(target) && !fs::is_symlink(target))
      throw Error("--value-cache " + o.value_cache + " exists and is not a regular file");
    const fs::path parent = fs::path(o.value_cache).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw Error("--value-cache " + o.value_cache + ": no folder " + parent.string());
    // a scratch file left by a run that was stopped is ours to clear; anything else is not
    const fs::file_status stale = fs::symlink_status(scratch, ec);
    if (fs::exists(stale) && !fs::is_regular_file(stale))
      throw Error("--value-cache: " + scratch + " is in the way and is not a file attnsim left; remove it");
    fs::remove(scratch, ec);
    lessons::use_model_value_cache(scratch);
  }
  std::vector<lessons::Diagnostic> problems;
  std::vector<lessons::Lesson> loaded;
  int steps = 0, quizzes = 0, claims = 0;
  for (const auto& f : files) {
    auto r = lessons::load_lesson(f);
    problems.insert(problems.end(), r.diagnostics.begin(), r.diagnostics.end());
    if (!r.lesson) continue;
    const size_t before = problems.size();
    lessons::check_lesson(*r.lesson, problems);
    for (const auto& s : r.lesson->steps) {
      ++steps;
      quizzes += s.quiz ? 1 : 0;
      claims += static_cast<int>(s.claims.size()) + (s.task ? static_cast<int>(s.task->claims.size()) : 0) +
                (s.quiz && s.quiz->kind == lessons::QuizKind::Number ? 1 : 0);
      if (s.quiz)
        for (const auto& opt : s.quiz->options) claims += static_cast<int>(opt.claims.size());
    }
    if (!o.quiet && problems.size() == before)
      std::printf("ok   %s  (%s, %zu steps)\n", f.c_str(), r.lesson->id.c_str(), r.lesson->steps.size());
    loaded.push_back(std::move(*r.lesson));
  }
  lessons::check_lesson_set(loaded, problems);
  for (const auto& p : problems) std::fprintf(stderr, "%s\n", p.str().c_str());
  std::error_code ec;
  if (!scratch.empty() && problems.empty()) {
    if (!fs::exists(scratch, ec)) model::write_text_file(scratch, "{}");  // no model values in these lessons
    fs::rename(scratch, o.value_cache, ec);
    if (ec) throw Error("cannot write " + o.value_cache + ": " + ec.message());
  } else if (!scratch.empty()) {
    fs::remove(scratch, ec);
  }
  if (!problems.empty()) {
    std::fprintf(stderr, "attnsim-cli: lesson check: %zu problem%s in %zu file%s\n", problems.size(),
                 problems.size() == 1 ? "" : "s", files.size(), files.size() == 1 ? "" : "s");
    return 2;
  }
  if (!o.quiet)
    std::printf("%zu lesson%s, %d steps, %d quizzes, %d engine checks: all agree with the engine\n",
                files.size(), files.size() == 1 ? "" : "s", steps, quizzes, claims);
  return 0;
}

int run_list(const LessonOptions& o) {
  const std::string dir = o.list_dir.empty() ? default_paths()[0] : o.list_dir;
  std::vector<lessons::Diagnostic> problems;
  const auto all = lessons::load_lesson_dir(dir, &problems);
  for (const auto& l : all)
    std::printf("%3lld  %-28s %2zu steps  %s / %s\n", static_cast<long long>(l.order), l.id.c_str(),
                l.steps.size(), l.title.en.c_str(), l.title.ko.c_str());
  for (const auto& p : problems) std::fprintf(stderr, "%s\n", p.str().c_str());
  return problems.empty() ? 0 : 2;
}

// Plain text with quoted figures between « » (the app draws them in their own style).
std::string shown(const std::string& text) {
  std::string out;
  for (const auto& block : lessons::parse_markup(text)) {
    if (!out.empty()) out += "\n";
    if (block.list_item) out += "  - ";
    for (const auto& span : block.spans) out += span.quote ? "«" + span.text + "»" : span.text;
  }
  return out;
}

int run_show(const LessonOptions& o) {
  const lessons::Lang lang = lessons::parse_lang(o.show_lang);
  const auto r = lessons::load_lesson(o.show_file);
  for (const auto& d : r.diagnostics) std::fprintf(stderr, "%s\n", d.str().c_str());
  if (!r.lesson) return 2;
  const lessons::Lesson& l = *r.lesson;
  std::printf("# %s\n%s\n", shown(l.title.get(lang)).c_str(), shown(l.summary.get(lang)).c_str());
  for (size_t i = 0; i < l.steps.size(); ++i) {
    const auto& s = l.steps[i];
    std::printf("\n## %zu. %s\n%s\n", i + 1, shown(s.title.get(lang)).c_str(), shown(s.text.get(lang)).c_str());
    if (!s.short_text.empty()) std::printf("[short] %s\n", shown(s.short_text.get(lang)).c_str());
    if (s.task)
      std::printf("[task] %s\n[done] %s\n", shown(s.task->prompt.get(lang)).c_str(),
                  shown(s.task->done.get(lang)).c_str());
    if (s.quiz) {
      std::printf("[quiz] %s\n", shown(s.quiz->question.get(lang)).c_str());
      for (size_t k = 0; k < s.quiz->options.size(); ++k)
        std::printf("  %c %zu) %s\n", static_cast<int>(k + 1) == s.quiz->correct ? '*' : ' ', k + 1,
                    shown(s.quiz->options[k].text.get(lang)).c_str());
      std::printf("[explanation] %s\n", shown(s.quiz->explanation.get(lang)).c_str());
    }
  }
  for (const auto& d : l.fill_problems) std::fprintf(stderr, "%s\n", d.str().c_str());
  return l.fill_problems.empty() ? 0 : 2;
}

}  // namespace

Runner add_lesson_command(CLI::App& app) {
  auto o = std::make_shared<LessonOptions>();
  CLI::App* cmd = app.add_subcommand("lesson", "check lesson files against the engine, list lessons");
  cmd->require_subcommand(1);
  CLI::App* check = cmd->add_subcommand(
      "check",
      "validate lessons: TOML syntax (file:line:column), unknown or missing keys, unknown "
      "steps/panels/scenarios, and every quiz answer and claim recomputed by the engine; exit 2 "
      "on any problem");
  check->add_option("paths", o->check_paths, "lesson files or folders (default: lessons/)");
  check->add_flag("-q,--quiet", o->quiet, "print problems only");
  check->add_option("--value-cache", o->value_cache,
                    "when every lesson agrees, write each trained-model value computed to this file, keyed "
                    "as the app's cache reads them (tools/web.sh puts one in the page)")
      ->check(not_empty());
  CLI::App* list = cmd->add_subcommand("list", "list the lessons of a folder in order");
  list->add_option("dir", o->list_dir, "folder (default: lessons/)");
  CLI::App* show = cmd->add_subcommand(
      "show", "print a lesson's text as the learner reads it, every {value:...} filled by the engine");
  show->add_option("file", o->show_file, "lesson file")->required();
  show->add_option("--lang", o->show_lang, "ko or en (default: en)");
  return [o, check, list, show]() -> int {
    if (check->parsed()) return run_check(*o);
    if (list->parsed()) return run_list(*o);
    if (show->parsed()) return run_show(*o);
    return 2;
  };
}

}  // namespace attnsim::cli
