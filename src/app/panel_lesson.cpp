// The lesson player. See lesson_ui.h.
//
// Index
//   [SECTION] State                 LessonUi, text helpers
//   [SECTION] Applying a step       apply_step: the simulator shows what the step says
//   [SECTION] Markup                draw_markup: **bold**, `code`, lists, wrapped
//   [SECTION] Figures               engine figures of the step (cost model, IO model)
//   [SECTION] Task and quiz         try-it goal checking, answers with feedback
//   [SECTION] Lesson panel          narrative, step n of m, previous / next
//   [SECTION] Browser               the lessons with their progress
//   [SECTION] Layout                normal, presenter and slide layouts
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>  // FindWindowByName, SetScrollY: a lesson scrolls the model panel to a head

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#ifndef __EMSCRIPTEN__
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "app/app.h"
#include "app/platform.h"
#include "views/cost_slides.h"
#include "views/deck_html.h"
#include "views/slide_scenes.h"
#include "app/figure_imgui.h"
#include "app/fonts.h"
#include "views/i18n.h"
#include "views/lesson_figures.h"
#include "app/lesson_state.h"
#include "app/lesson_ui.h"
#include "app/ui_scale.h"
#include "views/model_view.h"
#include "engine/atomic_file.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/scenario.h"
#include "figure/slide.h"
#include "lessons/model_quantity.h"
#include "lessons/whole_quantity.h"
#include "lessons/markup.h"

namespace attnsim::app {

// [SECTION] State ---------------------------------------------------------------------------

LessonUi& lesson_ui() {
  static LessonUi ui;
  return ui;
}


const char* L(const char* ko, const char* en) { return ui_lang() == Lang::Ko ? ko : en; }

namespace {

void want_ui_glyphs() {
  // Every Korean character of this panel's own UI strings and figure labels.
  fonts().want("·•…←→간값강개거건경계공그금기끔나너넷느는니다단닫달답당더동드든등뛴라량렬로록류를리린마맞메면모목못미바발배버보부불비산상서설성션소수숫스습시쓰아안양어업없엔연영예오와외용원위을음의이인일읽있자작장저전점정제종준즈지진차찾층치캐켬퀴크키타터텐투트파편포폴표하학한할함항해했행향허헤화확황힌");
}

void want_lesson_glyphs(const lessons::Lesson& l) {
  want_ui_glyphs();
  auto want = [](const lessons::Text& t) {
    fonts().want(t.ko);
    fonts().want(t.en);
  };
  want(l.title);
  want(l.summary);
  for (const auto& s : l.steps) {
    want(s.title);
    want(s.short_text);
    want(s.text);
    if (s.task) {
      want(s.task->prompt);
      want(s.task->done);
      want(s.task->hint);
    }
    if (s.quiz) {
      want(s.quiz->question);
      want(s.quiz->explanation);
      for (const auto& o : s.quiz->options) want(o.text);
    }
  }
}

void ensure_progress(LessonUi& ui) {
  if (ui.progress_loaded) return;
  ui.progress_loaded = true;
  if (ui.progress_path.empty()) ui.progress_path = lessons::default_progress_path();
  std::string warning;
  ui.progress = lessons::load_progress(ui.progress_path, &warning);
  if (!warning.empty()) std::fprintf(stderr, "attnsim: %s\n", warning.c_str());
}

void save(App& app, LessonUi& ui) {
  std::string error;
  if (!lessons::save_progress(ui.progress, ui.progress_path, &error))
    app.show_banner(std::string(L("진행 상황을 저장하지 못했다: ", "Could not save progress: ")) + error, true);
}

// The lessons on the trained model evaluate forward passes for their figures: keep their
// values between runs (lesson check always recomputes).
void use_value_cache(LessonUi& ui) {
  if (ui.value_cache_on) return;
  ui.value_cache_on = true;
  lessons::use_model_value_cache(lessons::default_model_value_cache());
}

void ensure_library(LessonUi& ui) {
  if (ui.library_loaded) return;
  ui.library_loaded = true;
  want_ui_glyphs();
  use_value_cache(ui);
  ui.dir = lessons::default_lesson_dir();
  if (ui.dir.empty()) return;
  std::vector<lessons::Diagnostic> problems;
  ui.library = lessons::load_lesson_dir(ui.dir, &problems, lessons::Fill::Later);  // figures when one opens
  for (const auto& p : problems) std::fprintf(stderr, "attnsim: %s\n", p.str().c_str());
  for (const auto& l : ui.library) {
    fonts().want(l.title.ko);
    fonts().want(l.summary.ko);
  }
}

// [SECTION] Figures in the background
//
// A lesson opens with its figures showing "…" (lessons::Fill::Later) and a worker fills them,
// the step on screen first (lessons/value_fill.h): a lesson on a trained model computes
// minutes of forward passes the first time (later runs read the value cache), and the window
// must keep drawing meanwhile.

// Stops the job filling the open lesson; it stops before its next value and is dropped later.
void stop_filling(LessonUi& ui) {
  if (ui.fill) ui.fill->stop = true;
  if (ui.fill_task.valid()) ui.retired_fills.push_back(std::move(ui.fill_task));
  ui.fill.reset();
}

// hold_lesson_figures: read by the fill's slices (on the page's main loop, or a worker).
std::atomic<bool> g_hold_figures{false};

void start_filling(LessonUi& ui, bool already_filled) {
  stop_filling(ui);
  lessons::Lesson& lesson = ui.player.lesson_to_fill();
  ui.text_step = lessons::text_steps(lesson);
  ui.text_filled.assign(ui.text_step.size(), false);
  for (size_t i = 0; i < ui.text_step.size(); ++i) ui.text_filled[i] = already_filled || ui.text_step[i] < 0;
  if (already_filled) return;
  auto job = std::make_shared<LessonFill>();
  job->want = ui.player.step_index();
  ui.fill = job;
  auto fill = std::make_shared<lessons::ValueFill>(lesson);
  // One text per call: the frame (and the page's main loop, where tasks run between frames)
  // gets the CPU back between texts, and a stop is seen before the next one.
  ui.fill_task = start_sliced(
      [job, fill] {
        if (job->stop) return false;
        if (g_hold_figures) return true;  // the page's first view first; the next slice tries again
        std::optional<lessons::FilledText> text;
        std::string failed;
        try {
          text = fill->next(job->want, &job->stop);
        } catch (const std::exception& e) {  // not the engine refusing a figure ("?"): out of memory, ...
          failed = e.what();
        }
        if (job->stop) return false;
        std::lock_guard<std::mutex> lock(job->mutex);
        if (text) {
          job->landed.push_back(std::move(*text));
          return true;
        }
        job->problems = fill->problems();
        if (!failed.empty()) job->problems.push_back(lessons::Diagnostic{"", 0, 0, "the figures stopped: " + failed});
        job->finished = true;
        return false;
      },
      [] {
#ifndef __EMSCRIPTEN__
        // Below the frame: the UI thread and the rasteriser come first (a nice value, not
        // SCHED_IDLE: on a busy machine an idle-class thread might never get to the figures).
        const auto self = static_cast<id_t>(::gettid());
        errno = 0;
        const int ui_nice = ::getpriority(PRIO_PROCESS, self);
        if (errno == 0) (void)::setpriority(PRIO_PROCESS, self, std::min(ui_nice + 5, 19));
#endif
      });
}

// Puts the figures that landed in place; true when those of the step on screen are all in.
bool poll_filling(LessonUi& ui) {
  for (size_t i = 0; i < ui.retired_fills.size();)  // stopped jobs that finished their text
    if (ui.retired_fills[i].wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      ui.retired_fills.erase(ui.retired_fills.begin() + static_cast<std::ptrdiff_t>(i));
    else
      ++i;
  if (!ui.player.is_open()) return true;
  if (ui.fill) {
    ui.fill->want = ui.player.step_index();
    std::vector<lessons::FilledText> landed;
    bool finished = false;
    std::vector<lessons::Diagnostic> problems;
    {
      std::lock_guard<std::mutex> lock(ui.fill->mutex);
      landed.swap(ui.fill->landed);
      finished = ui.fill->finished;
      if (finished) problems = ui.fill->problems;
    }
    lessons::Lesson& lesson = ui.player.lesson_to_fill();
    for (const lessons::FilledText& t : landed) {
      lessons::put_filled(lesson, t);
      fonts().want(t.text.ko);
      if (t.index < ui.text_filled.size()) ui.text_filled[t.index] = true;
    }
    if (finished) {
      ui.text_filled.assign(ui.text_filled.size(), true);  // nothing more comes: what is left stays "…"
      lesson.fill_problems = problems;
      for (const auto& p : problems) std::fprintf(stderr, "attnsim: %s\n", p.str().c_str());
      const bool whole = problems.empty() || problems.back().message.rfind("the figures stopped", 0) != 0;
      if (whole) ui.filled[lesson.path] = lesson;  // opened again, it needs no worker
      ui.fill.reset();
      if (ui.fill_task.valid()) ui.retired_fills.push_back(std::move(ui.fill_task));
    }
  }
  return step_filled(ui, ui.player.step_index());
}

}  // namespace

bool step_filled(const LessonUi& ui, int step) {
  for (size_t i = 0; i < ui.text_step.size(); ++i)
    if (ui.text_step[i] == step && !ui.text_filled[i]) return false;
  return true;
}

bool lesson_values_ready() { return poll_filling(lesson_ui()); }

void hold_lesson_figures(bool hold) { g_hold_figures = hold; }

void stop_lesson_work() {
  LessonUi& ui = lesson_ui();
  stop_filling(ui);
  for (auto& t : ui.retired_fills) t.wait();  // each ends at its next value
  ui.retired_fills.clear();
}

// [SECTION] Applying a step -----------------------------------------------------------------

namespace {

// A model step's own sequence (the one its figures are read on, or its words) and what its
// text names: the head's layer goes to the other views and the grid scrolls to it; the token's
// row and the bar are framed (mark_model).
void show_what_the_step_names(App& app, const lessons::LessonStep& step) {
  LessonUi& ui = lesson_ui();
  ui.scroll_to_highlight = !step.highlight_heads.empty();
  if (!app.model) return;
  try {
    if (step.sequence == lessons::kWholePassSequence) {
      app.model->set_tokens(lessons::step_whole_sequence(app.model->model(), step));
    } else if (!step.sequence.empty()) {
      app.model->set_text(step.sequence);
    }
  } catch (const Error& e) {
    app.show_banner(e.what(), true, 8.0);
  }
  mark_model(app, step.highlight_token, step.highlight_bar);
  if (!step.highlight_heads.empty() && step.highlight_heads[0].layer < app.model->model().config.layers) {
    app.model_layer = step.highlight_heads[0].layer;
    show_model_layer(app, app.model_layer);
  } else if (!step.sequence.empty()) {
    show_model_layer(app, app.model_layer);  // the other views show the new sequence
  }
}

}  // namespace

void apply_step(App& app) {
  LessonUi& ui = lesson_ui();
  if (!ui.player.is_open()) return;
  const lessons::LessonStep& step = ui.player.step();
  ui.applied_lesson = ui.player.lesson().id;
  ui.applied_step = ui.player.step_index();
  ui.answer[0] = '\0';
  ui.focus_answer = step.quiz && step.quiz->kind == lessons::QuizKind::Number;
  ui.picked = 0;
  ui.result.reset();
  ui.show_explanation = false;
  ui.task_key.clear();
  ui.task_done = false;
  ui.task_message.clear();
  ui.figures.clear();
  ui.figures_step = -1;
  ui.pending_action = step.action;
  mark_model(app, "", "");  // a model step marks again once its sequence is on screen
  lessons::Resolved r;
  try {
    r = ui.player.state();
  } catch (const Error& e) {
    app.show_banner(std::string(L("이 단계의 설정을 엔진이 거부했다: ", "The engine refused this step's settings: ")) + e.what(), true, 8.0);
    return;
  }
  if (lessons::is_model_panel(step.panel)) {
    // The trained model (its head grid, or its training tab): the app's model scenario,
    // with the induction heads knocked out when the step's action says so.
    ui.pending_action.clear();
    try {
      app_load_scenario(app, step.action == "ablate-induction" ? "model-ablate-induction" : "model",
                        lessons::step_model_dir(step));
    } catch (const Error& e) {
      app.show_banner(e.what(), true, 8.0);
      return;
    }
    if (app.model) app.model->set_show_contribution(step.action == "show-contribution");
    open_model_tab(app, step.panel == "timeline"                ? "training"
                        : step.action.rfind("open-", 0) == 0 ? step.action.substr(5)  // open-overview ...
                                                              : "heads");
    show_what_the_step_names(app, step);
    ui.player.record(ui.progress);
    save(app, ui);
    return;
  }
  if (find_scenario(r.preset).decode.trained) {
    // The trained model decoding (lesson 13): the checkpoint the step's claims read, its
    // sizes kept (apply() would put the preset's random-weight sizes back); only the cache
    // policy comes from the step.
    try {
      app_load_scenario(app, r.preset, lessons::step_model_dir(step));
    } catch (const Error& e) {
      app.show_banner(e.what(), true, 8.0);
      return;
    }
    if (!r.policy.empty()) app.session.scenario().decode.policy = r.policy;
    ui.player.record(ui.progress);
    save(app, ui);
    return;
  }
  app_load_scenario(app, r.preset);
  Scenario& s = app.session.scenario();
  lessons::apply(r, s);
  if (!step.trace_step.empty()) s.focus_step = step.trace_step;
  s.focus_batch = step.batch;
  app.session.request();
  app.presenting_bug_lab = s.has_reference && step.panel == "buglab";
  app.tensor_view.zoom = static_cast<float>(step.zoom);
  app.tensor_view.pan = {0, 0};
  ui.player.record(ui.progress);
  save(app, ui);
}

void open_lesson(App& app, const lessons::Lesson& lesson, int step) {
  LessonUi& ui = lesson_ui();
  ensure_progress(ui);
  use_value_cache(ui);
  const auto done = ui.filled.find(lesson.path);
  const lessons::Lesson& shown = done != ui.filled.end() ? done->second : lesson;
  want_lesson_glyphs(shown);
  ui.player.open(shown, step);
  start_filling(ui, done != ui.filled.end());
  ui.browser_open = false;
  apply_step(app);
}

bool open_lesson_file(App& app, const std::string& path, int step) {
  auto r = lessons::load_lesson(path, lessons::Fill::Later);  // the figures fill in on a worker
  if (!r.lesson) {
    std::string text = "cannot open lesson " + path;
    if (!r.diagnostics.empty()) text += ": " + r.diagnostics.front().str();
    std::fprintf(stderr, "attnsim: %s\n", text.c_str());
    app.show_banner(text, true, 10.0);
    return false;
  }
  LessonUi& ui = lesson_ui();
  ensure_progress(ui);
  const int n = static_cast<int>(r.lesson->steps.size());
  if (step >= n) {  // --at past the lesson (a headless export refuses it before: main.cpp)
    app.show_banner(trf("--at %d: this lesson has steps 1 to %d; showing step 1.", step + 1, n), true, 10.0);
    step = 0;
  }
  const auto it = ui.progress.lessons.find(r.lesson->id);
  if (step < 0) step = it == ui.progress.lessons.end() ? 0 : it->second.step;  // where the learner left it
  open_lesson(app, *r.lesson, step);
  return true;
}

bool open_lesson_by_id(App& app, const std::string& id, int step) {
  LessonUi& ui = lesson_ui();
  ensure_library(ui);  // loaded once (figures filled when a lesson opens), shared with the browser
  for (const lessons::Lesson& l : ui.library)
    if (l.id == id) {
      const int n = static_cast<int>(l.steps.size());
      if (step < 0 || step >= n) {  // a link's at= past the lesson, or not a number at all
        app.show_banner(trf("The link asks for step %s, but this lesson has steps 1 to %d; showing step 1.",
                            step < 0 ? "?" : std::to_string(step + 1).c_str(), n),
                        true, 10.0);
        step = 0;
      }
      open_lesson(app, l, step);
      return true;
    }
  app.show_banner("no lesson with id '" + id + "' in " + lessons::default_lesson_dir(), true, 10.0);
  return false;
}

void open_lesson_browser() { lesson_ui().browser_open = true; }

bool lesson_position(std::string* id, int* step) {
  const LessonUi& ui = lesson_ui();
  if (!ui.player.is_open()) return false;
  *id = ui.player.lesson().id;
  *step = ui.player.step_index();
  return true;
}

namespace {

void go(App& app, int delta) {
  LessonUi& ui = lesson_ui();
  const bool moved = delta > 0 ? ui.player.next() : ui.player.previous();
  if (moved) apply_step(app);
}

void close_lesson() {
  LessonUi& ui = lesson_ui();
  stop_filling(ui);
  ui.player = lessons::Player();
  ui.presenting = false;
  set_presenter_boost(1.0f);
}

// [SECTION] Markup --------------------------------------------------------------------------

const ImVec4 kBold{1.0f, 0.85f, 0.35f, 1.0f};
const ImVec4 kCode{0.55f, 0.85f, 1.0f, 1.0f};
// A figure quoted from the article or the literature: its own colour and a dotted underline,
// so the learner can tell it from the engine's figures.
const ImVec4 kQuote{0.9f, 0.6f, 1.0f, 1.0f};

// One line of text without the markup's marks (titles, options: no wrapping spans).
std::string unmarked(const std::string& text) { return lessons::plain_text(lessons::parse_markup(text)); }

// Draws words one by one so bold and code can take their own colour and still wrap.
void draw_spans(const std::vector<lessons::Span>& spans, float left, float right) {
  const float space = ImGui::CalcTextSize(" ").x;
  bool line_start = true;
  bool space_before = false;  // a space ended the previous span
  for (const auto& span : spans) {
    size_t i = 0;
    const std::string& t = span.text;
    while (i < t.size()) {
      const bool lead_space = t[i] == ' ' || (i == 0 && space_before);
      while (i < t.size() && t[i] == ' ') ++i;
      size_t j = i;
      while (j < t.size() && t[j] != ' ') ++j;
      if (j == i) break;
      const std::string word = t.substr(i, j - i);
      const float w = ImGui::CalcTextSize(word.c_str()).x;
      if (!line_start) {
        ImGui::SameLine(0, lead_space ? space : 0);
        if (ImGui::GetCursorPosX() + w > right) {
          ImGui::NewLine();
          ImGui::SetCursorPosX(left);
        }
      } else {
        ImGui::SetCursorPosX(left);
      }
      if (span.quote) {
        ImGui::TextColored(kQuote, "%s", word.c_str());
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        for (float x = a.x; x < b.x; x += 4)
          ImGui::GetWindowDrawList()->AddLine({x, b.y}, {std::min(x + 2, b.x), b.y},
                                              ImGui::GetColorU32(kQuote));
      } else if (span.bold || span.code)
        ImGui::TextColored(span.code ? kCode : kBold, "%s", word.c_str());
      else
        ImGui::TextUnformatted(word.c_str());
      line_start = false;
      i = j;
    }
    space_before = !t.empty() && t.back() == ' ';
  }
}

void draw_markup(const std::string& text) {
  const auto blocks = lessons::parse_markup(text);
  const float left = ImGui::GetCursorPosX();
  const float right = ImGui::GetWindowContentRegionMax().x - 4;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto& block = blocks[b];
    if (block.list_item) {
      ImGui::SetCursorPosX(left);
      ImGui::TextUnformatted("•");
      ImGui::SameLine();
      draw_spans(block.spans, left + ImGui::CalcTextSize("• ").x + 2, right);
    } else {
      if (b > 0) ImGui::Spacing();
      draw_spans(block.spans, left, right);
    }
  }
}

// [SECTION] Figures -------------------------------------------------------------------------

// The step's figures from the cost model and the IO model, computed once per step.
void compute_figures(LessonUi& ui) {
  if (ui.figures_step == ui.player.step_index()) return;
  ui.figures_step = ui.player.step_index();
  ui.figures = step_figures(ui.player.step(), ui.player.lesson().settings_at(static_cast<size_t>(ui.figures_step)),
                            ui.eval);
}

// The table figure of the step's figures (cost_slides.h cost_view: the cost slide's table),
// drawn through the ImGui sink at the UI's text size; hovering a name shows its quantity.
void draw_figures(LessonUi& ui) {
  compute_figures(ui);
  if (ui.figures.empty()) return;
  ImGui::TextDisabled("%s", L("엔진이 계산한 수치", "Figures computed by the engine"));
  // Narrow panels shrink the type before the value column pushes the names out.
  const float avail = ImGui::GetContentRegionAvail().x;
  if (avail < 8) return;
  const float scale = std::max(0.2f, std::min(ImGui::GetFontSize() / figure::kLabelMin, avail / 900.0f));
  static struct {
    std::string key;
    CostView view;
  } cache;
  std::string key = std::to_string(static_cast<int>(avail)) + "|" + std::to_string(scale) + "|" + panel_theme().name +
                    (panel_lang() == lessons::Lang::Ko ? "|ko" : "|en");
  for (const StepFigure& f : ui.figures) key += "|" + f.quantity + "=" + f.sizes + "=" + f.value;
  if (cache.key != key) {
    cache.key = key;
    cache.view = cost_view(ui.figures, panel_lang(), panel_theme().name, avail / scale);
    want_figure_glyphs(cache.view.figure);
  }
  const figure::Figure& fig = cache.view.figure;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float drawn = std::min(scale, avail / fig.width);  // a table laid out wider than asked (cost_view)
  draw_figure(ImGui::GetWindowDrawList(), fig, origin, drawn, Backdrop::Window);
  ImGui::InvisibleButton("##figures-table", {fig.width * drawn, fig.height * drawn});
  if (!ImGui::IsItemHovered()) return;
  const ImVec2 m = ImGui::GetIO().MousePos;
  const figure::Rect at{(m.x - origin.x) / drawn, (m.y - origin.y) / drawn, 0, 0};
  for (size_t r = 0; r < cache.view.layout.cells.size() && r < ui.figures.size(); ++r) {
    const figure::Rect name = figure::text_box(std::get<figure::Text>(fig.items[cache.view.layout.cells[r][0]]));
    if (at.x >= name.x && at.x <= name.right() && at.y >= name.y && at.y <= name.bottom())
      ImGui::SetTooltip("%s", ui.figures[r].quantity.c_str());
  }
}

void panel_figures(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "cost", L("수치", "Figures"), rect)) return end_panel();
  ImGui::Spacing();
  draw_figures(lesson_ui());
  end_panel();
}

// [SECTION] Task and quiz -------------------------------------------------------------------

lessons::LiveState live_state(const App& app) {
  lessons::LiveState live;
  const Scenario& s = const_cast<App&>(app).session.scenario();
  live.config = s.config;
  live.sentences = s.sentences;
  live.key_sentences = s.key_sentences;
  live.input_scale = s.input_scale;
  live.preset = s.name;
  if (const Step* st = app.current_step()) live.trace_step = st->name;
  if (app.model && app.model->loaded()) {
    live.model = true;
    for (const model::HeadRef& h : app.model->ablated_heads())
      live.ablated += (live.ablated.empty() ? "" : ",") + std::to_string(h.layer) + "." + std::to_string(h.head);
    live.knocked_out = static_cast<int64_t>(app.model->ablated_heads().size());
    live.mean_ablation = app.model->mean_ablation();
  }
  return live;
}

// "지금 헤드 수는 1, 목표는 4": the goal gap in Korean.
std::string gap_ko(const lessons::GoalGap& g) {
  static const std::map<std::string, std::string> names = {
      {"batch", "배치"}, {"heads", "헤드 수"}, {"seed", "시드"}, {"bias", "편향"},
      {"W_O = identity", "W_O = 항등 행렬"}, {"train mode", "학습 모드"},
      {"cross-attention", "크로스 어텐션"}, {"the mask", "마스크"}, {"the bug mode", "버그 모드"},
      {"the step on screen", "화면의 단계"}, {"the model panel", "모델 패널"}, {"the ablation", "절제 방식"},
      {"heads knocked out", "끈 헤드 수"}};
  static const std::map<std::string, std::string> words = {{"on", "켬"},   {"off", "끔"},  {"open", "열림"},
                                                           {"closed", "닫힘"}, {"zero", "0"}, {"mean", "평균"}};
  auto word = [](const std::string& v) {
    const auto it = words.find(v);
    return it == words.end() ? v : it->second;
  };
  const auto it = names.find(g.setting);
  return "지금 " + (it == names.end() ? g.setting : it->second) + ": " + word(g.have) + ", 목표: " + word(g.want);
}

void draw_task(App& app, LessonUi& ui, const lessons::Task& task, const std::string& step_id) {
  const auto lang = panel_lang();
  ImGui::Spacing();
  ImGui::TextColored(kBold, "%s", L("해 보기", "Try it"));
  draw_markup(task.prompt.get(lang));
  const lessons::LiveState live = live_state(app);
  std::string why;
  lessons::GoalGap gap;
  bool reached = false;
  try {
    reached = lessons::goal_reached(task, live, &why, &gap);
    if (!reached && ui_lang() == Lang::Ko) why = gap_ko(gap);
  } catch (const Error& e) {
    why = e.what();
  }
  if (reached && !app.session.busy()) {
    // The goal settings are on screen: check the engine facts once per state.
    const std::string key = lessons::format_value(std::vector<int64_t>{live.config.heads, live.config.d_model,
                                                                        live.config.tq, live.config.batch}) +
                            bug_name(live.config.bug) + format_mask_spec(live.config.mask) +
                            (live.config.wo_identity ? "I" : "W") + live.trace_step + "|" + live.ablated;
    if (key != ui.task_key && task.model_goal) {
      // A model task's claims run the evaluation batch through the model once per new set of
      // knocked-out heads (about a second on a loaded machine): a worker checks them so the
      // frame keeps its budget. One job at a time; a result for a state no longer on screen is
      // dropped and the current state checked next.
      const std::string job_key = step_id + "|" + key;
      if (ui.task_job.valid() && ui.task_job.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        const std::string failure = ui.task_job.get();
        if (ui.task_job_key == job_key) {
          ui.task_key = key;
          ui.task_done = failure.empty();
          ui.task_message = failure;
          if (ui.task_done && ui.progress.lessons[ui.player.lesson().id].tasks_done.insert(step_id).second)
            save(app, ui);
        }
      }
      if (key != ui.task_key && !ui.task_job.valid()) {
        ui.task_job_key = job_key;
        ui.task_job = start_task([task, live] {
          lessons::Evaluator eval;
          for (const auto& c : task.claims) {
            std::string w;
            try {
              if (!eval.holds(lessons::live_claim(task, c, live), lessons::settings_of(live), &w))
                return c.quantity + ": " + w;
            } catch (const Error& e) {
              return c.quantity + ": " + e.what();
            }
          }
          return std::string();
        });
      }
      if (key != ui.task_key) {
        ImGui::TextDisabled("%s", L("확인하는 중…", "checking…"));
        return;
      }
    } else if (key != ui.task_key) {
      ui.task_key = key;
      ui.task_done = true;
      ui.task_message.clear();
      for (const auto& c : task.claims) {
        std::string w;
        if (!ui.eval.holds(lessons::live_claim(task, c, live), lessons::settings_of(live), &w)) {
          ui.task_done = false;
          ui.task_message = c.quantity + ": " + w;
        }
      }
      if (ui.task_done && ui.progress.lessons[ui.player.lesson().id].tasks_done.insert(step_id).second)
        save(app, ui);
    }
  } else if (!reached) {
    ui.task_key.clear();
    ui.task_done = false;
  }
  if (reached && ui.task_done) {
    ImGui::TextColored({0.45f, 0.9f, 0.45f, 1}, "%s", L("목표 달성!", "Goal reached!"));
    draw_markup(task.done.get(lang));
  } else if (reached && !ui.task_message.empty()) {
    ImGui::TextColored({1, 0.5f, 0.4f, 1}, "%s", ui.task_message.c_str());
  } else {
    ImGui::TextDisabled("%s", why.c_str());
    if (!task.hint.empty() && ImGui::TreeNode(L("힌트", "Hint"))) {
      draw_markup(task.hint.get(lang));
      ImGui::TreePop();
    }
  }
}

void draw_quiz(App& app, LessonUi& ui, const lessons::Quiz& quiz, const std::string& step_id) {
  const auto lang = panel_lang();
  ImGui::Spacing();
  ImGui::TextColored(kBold, "%s", L("퀴즈", "Quiz"));
  draw_markup(quiz.question.get(lang));
  bool check = false;
  if (quiz.kind == lessons::QuizKind::Number) {
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.5f);
    if (ui.focus_answer) {  // type the answer, Enter checks it: no click first
      ImGui::SetKeyboardFocusHere();
      ui.focus_answer = false;
    }
    check |= ImGui::InputText("##answer", ui.answer, sizeof ui.answer, ImGuiInputTextFlags_EnterReturnsTrue);
    if (!quiz.unit.empty()) {
      ImGui::SameLine();
      ImGui::TextDisabled("%s", quiz.unit.c_str());
    }
    ImGui::SameLine();
    check |= ImGui::Button(L("확인", "Check"));
    if (check) ui.result = lessons::check_number(quiz, ui.answer);
  } else {
    for (size_t i = 0; i < quiz.options.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      const std::string label = unmarked(quiz.options[i].text.get(lang));
      if (ImGui::RadioButton(label.c_str(), ui.picked == static_cast<int>(i + 1))) {
        ui.picked = static_cast<int>(i + 1);
        ui.result = lessons::check_choice(quiz, ui.picked);
        check = true;
      }
      ImGui::PopID();
    }
  }
  if (ui.result) {
    if (!ui.result->readable) {
      ImGui::TextColored({1, 0.6f, 0.3f, 1}, "%s", L("읽을 수 없는 숫자다 (예: 2147483648, 2 GiB)", "Cannot read that number (e.g. 2147483648, 2 GiB)"));
    } else if (ui.result->right) {
      ImGui::TextColored({0.45f, 0.9f, 0.45f, 1}, "%s", L("정답!", "Right!"));
      ui.show_explanation = true;
      if (check && ui.progress.lessons[ui.player.lesson().id].quizzes_right.insert(step_id).second) save(app, ui);
    } else {
      ImGui::TextColored({1, 0.5f, 0.4f, 1}, "%s", L("아니다. 다시 해 보자", "Not quite. Try again"));
      ImGui::SameLine();
      if (ImGui::SmallButton(L("해설 보기", "Show the answer"))) ui.show_explanation = true;
    }
  }
  if (ui.show_explanation) {
    if (quiz.kind == lessons::QuizKind::Number)
      ImGui::Text("%s %s %s", L("정답:", "Answer:"), format_figure("", quiz.answer).c_str(), quiz.unit.c_str());
    draw_markup(quiz.explanation.get(lang));
  }
}

// [SECTION] Lesson panel --------------------------------------------------------------------

// The result of the step's action (check-hidden): the report's first line, green or red.
void draw_action_result(const App& app, const lessons::LessonStep& step) {
  if (step.action != "check-hidden" || app.hidden_check.empty()) return;
  const std::string first = app.hidden_check.substr(0, app.hidden_check.find('\n'));
  ImGui::TextColored(app.hidden_check_pass ? ImVec4(0.45f, 0.9f, 0.45f, 1) : ImVec4(1, 0.5f, 0.4f, 1), "%s",
                     first.c_str());
}

// When the pass stopped with the engine's error (view without contiguous), say it in red.
void draw_run_error(const App& app) {
  const RunData* d = app.data();
  if (!d || d->run.error.empty()) return;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored({1.0f, 0.45f, 0.4f, 1.0f}, "%s %s", L("엔진의 오류:", "The engine's error:"), d->run.error.c_str());
  ImGui::PopTextWrapPos();
}

// While the step's figures are being computed: a line that says so, with a spinner, above
// the text whose figures show "…" (they fill in as they land).
void draw_pending(const LessonUi& ui) {
  if (step_filled(ui, ui.player.step_index())) return;
  size_t left = 0;
  for (size_t i = 0; i < ui.text_step.size(); ++i) left += ui.text_step[i] == ui.player.step_index() && !ui.text_filled[i];
  // A turning arc (drawn, so no font needs a spinner glyph), then the words.
  const float r = ImGui::GetFontSize() * 0.4f;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const ImVec2 c{at.x + r + 1, at.y + ImGui::GetFontSize() * 0.5f};
  const float a = static_cast<float>(ImGui::GetTime()) * 6.0f;
  ImDrawList* list = ImGui::GetWindowDrawList();
  list->PathArcTo(c, r, a, a + 4.2f, 16);
  list->PathStroke(ImGui::GetColorU32(kCode), 0, 2.0f);
  ImGui::Dummy({2 * r + 2, ImGui::GetFontSize()});
  ImGui::SameLine();
  ImGui::TextColored(kCode, "%s",
                     trf("Computing this step's figures with the engine… (%d texts left)", static_cast<int>(left)).c_str());
}

void draw_lesson_body(App& app, LessonUi& ui, bool presenting) {
  const auto lang = panel_lang();
  const lessons::Lesson& lesson = ui.player.lesson();
  const lessons::LessonStep& step = ui.player.step();
  ImGui::TextDisabled("%s  ·  %s %d / %d", unmarked(lesson.title.get(lang)).c_str(), L("단계", "step"),
                      ui.player.step_index() + 1, ui.player.step_count());
  const float title_scale = presenting ? 1.35f : 1.2f;
  ImGui::SetWindowFontScale(title_scale);
  ImGui::TextColored(kBold, "%s", unmarked(step.title.get(lang)).c_str());
  ImGui::SetWindowFontScale(1.0f);
  ImGui::Separator();
  draw_pending(ui);
  draw_markup(step.text.get(lang));
  draw_action_result(app, step);
  draw_run_error(app);
  if (!presenting) {
    if (step.task) draw_task(app, ui, *step.task, step.id);
    if (step.quiz) draw_quiz(app, ui, *step.quiz, step.id);
    if (step.panel != "cost") {
      ImGui::Spacing();
      draw_figures(ui);
    }
  }
}

void draw_nav(App& app, LessonUi& ui) {
  const int i = ui.player.step_index(), n = ui.player.step_count();
  ImGui::BeginDisabled(i == 0);
  if (ImGui::Button(L("← 이전", "← Previous"))) go(app, -1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::ProgressBar(static_cast<float>(i + 1) / static_cast<float>(std::max(n, 1)), {ImGui::GetContentRegionAvail().x * 0.45f, 0},
                     (std::to_string(i + 1) + " / " + std::to_string(n)).c_str());
  ImGui::SameLine();
  ImGui::BeginDisabled(i + 1 >= n);
  if (ImGui::Button(L("다음 →", "Next →"))) go(app, +1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(L("발표 모드", "Present"))) ui.presenting = true;
  ImGui::SameLine();
  if (ImGui::SmallButton(L("닫기", "Close"))) close_lesson();
}

void panel_lesson(App& app, const ImVec4& rect) {
  LessonUi& ui = lesson_ui();
  if (!begin_panel(app, "lesson", L("강의", "Lesson"), rect)) return end_panel();
  if (ui.player.is_open()) {
    draw_nav(app, ui);
    ImGui::Separator();
    ImGui::BeginChild("##lesson_text");
    draw_lesson_body(app, ui, false);
    ImGui::EndChild();
  }
  end_panel();
}

// [SECTION] Browser -------------------------------------------------------------------------

void draw_browser(App& app) {
  LessonUi& ui = lesson_ui();
  if (!ui.browser_open) return;
  ensure_library(ui);
  ensure_progress(ui);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f},
                          ImGuiCond_Appearing, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({std::min(760.0f, vp->WorkSize.x - 40), std::min(560.0f, vp->WorkSize.y - 40)},
                           ImGuiCond_Appearing);
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.10f, 0.11f, 0.13f, 0.98f));
  if (ImGui::Begin(L("강의 목록###lessons", "Lessons###lessons"), &ui.browser_open, ImGuiWindowFlags_NoSavedSettings)) {
    if (ui.library.empty())
      ImGui::TextWrapped("%s", L("강의 폴더를 찾지 못했다 (ATTNSIM_LESSONS로 지정할 수 있다).",
                                 "No lessons folder found (set ATTNSIM_LESSONS)."));
    const auto lang = panel_lang();
    for (const auto& l : ui.library) {
      ImGui::PushID(l.id.c_str());
      const float frac = static_cast<float>(ui.progress.fraction(l.id, l.steps.size()));
      const auto it = ui.progress.lessons.find(l.id);
      const bool started = it != ui.progress.lessons.end();
      const std::string label = std::to_string(l.order) + ". " + unmarked(l.title.get(lang));
      if (ImGui::Selectable(label.c_str(), ui.progress.last_lesson == l.id, 0, {ImGui::GetContentRegionAvail().x * 0.62f, 0}))
        open_lesson(app, l, started ? it->second.step : 0);
      ImGui::SameLine();
      char overlay[96];
      const size_t quizzes = started ? it->second.quizzes_right.size() : 0;
      std::snprintf(overlay, sizeof overlay, "%d%%  ·  %s %zu", static_cast<int>(std::round(frac * 100)),
                    L("맞힌 퀴즈", "quizzes right"), quizzes);
      ImGui::ProgressBar(frac, {-1, 0}, overlay);
      ImGui::Indent(16);
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      ImGui::TextWrapped("%s", unmarked(l.summary.get(lang)).c_str());
      ImGui::PopStyleColor();
      ImGui::Unindent(16);
      ImGui::PopID();
    }
  }
  ImGui::End();
  ImGui::PopStyleColor();
}

// The open lesson's slides as one HTML file (deck_html.h), the theme of the slide view.
void export_deck(App& app, LessonUi& ui) {
  if (std::find(ui.text_filled.begin(), ui.text_filled.end(), false) != ui.text_filled.end()) {
    // A slide states every figure: one still computing would print as "…"
    app.show_banner(tr("The lesson's figures are still being computed: export the slides when they are in."), true, 6.0);
    return;
  }
  const lessons::Lesson& lesson = ui.player.lesson();
  std::string path = export_path(lesson.id + "-slides.html"), error;
  try {
    write_file_atomically(path, deck_html(lesson_deck(lesson, panel_lang(), app.slide_theme), 1920));
    if (!deliver_export(path, &error)) throw Error(error);
    app.show_banner(std::string(L("저장함", "Saved")) + ": " + path.substr(path.rfind('/') + 1), false);
  } catch (const Error& e) {
    app.show_banner(std::string(L("내보내기 실패", "Export failed")) + ": " + e.what(), true, 8.0);
  }
}

void lessons_menu(App& app) {
  LessonUi& ui = lesson_ui();
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu(L("강의", "Lessons"))) {
    if (ImGui::MenuItem(L("강의 목록…", "Browse lessons…"))) ui.browser_open = true;
    ensure_progress(ui);
    ensure_library(ui);
    if (!ui.progress.last_lesson.empty() && !ui.player.is_open()) {
      for (const auto& l : ui.library)
        if (l.id == ui.progress.last_lesson &&
            ImGui::MenuItem((std::string(L("이어서: ", "Resume: ")) + l.title.get(panel_lang())).c_str()))
          open_lesson(app, l, ui.progress.lessons[l.id].step);
    }
    if (ui.player.is_open()) {
      ImGui::Separator();
      ImGui::MenuItem(L("발표 모드", "Presenter mode"), "F5", &ui.presenting);
      if (ImGui::MenuItem(L("슬라이드 내보내기 (HTML 한 파일)", "Export slides (one HTML file)"))) export_deck(app, ui);
      if (ImGui::MenuItem(L("강의 닫기", "Close the lesson"))) close_lesson();
    }
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

// [SECTION] Layout --------------------------------------------------------------------------

void draw_highlights(App& app, const lessons::LessonStep& step);
void draw_head_highlight(App& app, const lessons::LessonStep& step);

// Every step of the run as one table (name, op, shape, strides, kind, bytes), the step the
// lesson points at lit: the pipeline view for presenter mode and slides, where the narrow
// pipeline list would waste the width.
void panel_shapes(App& app, const lessons::LessonStep& step, const ImVec4& rect) {
  if (!begin_panel(app, "pipeline", tr("Pipeline"), rect)) return end_panel();
  const RunData* d = app.data();
  if (!d) return end_panel();
  auto dims = [](const Tensor& t, bool strides) {
    if (!t.defined()) return std::string("-");
    return format_dims(strides ? t.strides() : t.shape());
  };
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_ScrollY;
  if (ImGui::BeginTable("##shapes", 6, flags)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {L("단계", "step"), L("연산", "op"), L("모양", "shape"), L("스트라이드", "strides"),
                          L("종류", "kind"), L("바이트", "bytes")})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const Step& st : d->run.trace.steps) {
      ImGui::TableNextRow();
      const bool lit = st.name == step.trace_step;
      if (lit) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, IM_COL32(110, 90, 20, 200));
      const ImVec4 dim{0.55f, 0.57f, 0.6f, 1};
      ImGui::TableNextColumn();
      ImGui::TextColored(st.skipped() ? dim : (lit ? kBold : ImVec4(1, 1, 1, 1)), "%s", st.name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextColored(dim, "%s", st.op.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(dims(st.out, false).c_str());
      ImGui::TableNextColumn();
      ImGui::TextColored(dim, "%s", dims(st.out, true).c_str());
      ImGui::TableNextColumn();
      const ImVec4 kind_colour = st.kind == StepKind::View ? kCode
                                 : st.kind == StepKind::Copy ? ImVec4(1.0f, 0.55f, 0.35f, 1)
                                                             : dim;
      ImGui::TextColored(kind_colour, "%s", tr(step_kind_name(st.kind)));
      ImGui::TableNextColumn();
      const int64_t bytes = st.kind == StepKind::Copy ? st.copied_bytes : st.new_bytes;
      ImGui::TextUnformatted(bytes ? human_bytes(bytes).c_str() : "0");
    }
    ImGui::EndTable();
  }
  end_panel();
}

// The view a step asks for, in `rect`.
void draw_view(App& app, const lessons::LessonStep& step, const ImVec4& rect) {
  const std::string& p = step.panel;
  if (p == "memory") panel_memory(app, rect);
  else if (p == "pipeline") panel_shapes(app, step, rect);
  else if (p == "controls") panel_controls(app, rect);
  else if (p == "cost") panel_figures(app, rect);
  else if (p == "buglab" && app.data() && app.data()->has_reference) panel_buglab(app, rect);
  else if (p == "flash") panel_flash(app, rect);
  else if (lessons::is_model_panel(p) && app.model) {
    panel_model(app, rect);
    draw_head_highlight(app, step);
  }
  else if (p == "decode" && app.session.scenario().decode.enabled) panel_decode(app, rect);
  else {
    panel_tensor(app, rect);  // tensor, lesson
    draw_highlights(app, step);
  }
}

// Outlines the heads a model step's text names (highlight.head) over the head grid just drawn
// (app.model_cells), and scrolls the model panel once so that the first is in view.
void draw_head_highlight(App& app, const lessons::LessonStep& step) {
  if (step.highlight_heads.empty() || app.model_cells.empty()) return;
  const auto rect = app.panel_rects.find("model");
  if (rect == app.panel_rects.end()) return;
  const int64_t layers = app.model->model().config.layers, heads = app.model->model().config.heads;
  const ImVec4 clip = rect->second;
  LessonUi& ui = lesson_ui();
  ImDrawList* list = ImGui::GetForegroundDrawList();
  list->PushClipRect({clip.x, clip.y}, {clip.x + clip.z, clip.y + clip.w}, true);
  for (size_t k = 0; k < step.highlight_heads.size(); ++k) {
    const lessons::HeadName& h = step.highlight_heads[k];
    if (h.layer >= layers || h.head >= heads) continue;  // lesson check refuses it
    const size_t i = static_cast<size_t>(h.layer * heads + h.head);
    if (i >= app.model_cells.size()) continue;
    const ImVec4 c = app.model_cells[i];
    list->AddRect({c.x - 4, c.y - 4}, {c.x + c.z + 4, c.y + c.w + 4}, IM_COL32(255, 214, 64, 255),
                  3.0f, 0, 3.5f);
    if (k == 0 && ui.scroll_to_highlight) {
      // The cell's middle at 40 % of the panel's height, unless it is in view already.
      ui.scroll_to_highlight = false;
      const float top = clip.y + ImGui::GetFrameHeight() * 3, bottom = clip.y + clip.w - 8;
      if (c.y < top || c.y + c.w > bottom) {
        if (ImGuiWindow* w = ImGui::FindWindowByName("###model"))
          ImGui::SetScrollY(w, std::max(0.0f, w->Scroll.y + (c.y + c.w * 0.5f) - (clip.y + clip.w * 0.4f)));
      }
    }
  }
  list->PopClipRect();
}

// Outlines the rows, columns and head a step points at, over the tensor view just drawn
// (app.geometry_rows: the screen rect of every block row, blocks = heads for 4-D tensors).
void draw_highlights(App& app, const lessons::LessonStep& step) {
  if (step.rows.empty() && step.cols.empty() && !step.head) return;
  const Step* shown = app.current_step();
  const auto rect = app.panel_rects.find("tensor");
  if (!shown || !shown->out.defined() || shown->out.dim() < 2 || rect == app.panel_rects.end()) return;
  const auto& rows = app.geometry_rows;
  const int64_t per_block = shown->out.size(-2);
  if (per_block <= 0 || rows.empty() || static_cast<int64_t>(rows.size()) % per_block != 0) return;
  const int64_t blocks = static_cast<int64_t>(rows.size()) / per_block;
  ImDrawList* list = ImGui::GetForegroundDrawList();
  const ImVec4 clip = rect->second;
  list->PushClipRect({clip.x, clip.y}, {clip.x + clip.z, clip.y + clip.w}, true);
  const ImU32 colour = IM_COL32(255, 214, 64, 255);
  const float thick = 2.5f;
  for (int64_t b = 0; b < blocks; ++b) {
    if (step.head && shown->out.dim() == 4 && *step.head != b) continue;
    const ImVec4 first = rows[static_cast<size_t>(b * per_block)];
    const ImVec4 last = rows[static_cast<size_t>(b * per_block + per_block - 1)];
    const float cell = first.w;
    if (step.head && shown->out.dim() == 4 && step.rows.empty() && step.cols.empty())
      list->AddRect({first.x - 3, first.y - 3}, {first.x + first.z + 3, last.y + last.w + 3}, colour, 0, 0, thick);
    for (int64_t r : step.rows)
      if (r >= 0 && r < per_block) {
        const ImVec4 row = rows[static_cast<size_t>(b * per_block + r)];
        list->AddRect({row.x - 1, row.y - 1}, {row.x + row.z + 1, row.y + row.w + 1}, colour, 0, 0, thick);
      }
    for (int64_t c : step.cols)
      if (c >= 0 && static_cast<float>(c) * cell < first.z)
        list->AddRect({first.x + static_cast<float>(c) * cell - 1, first.y - 1},
                      {first.x + static_cast<float>(c + 1) * cell + 1, last.y + last.w + 1}, colour, 0, 0, thick);
  }
  list->PopClipRect();
}

void layout_normal(App& app, LessonUi& ui) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = vp->WorkPos.y, w = vp->WorkSize.x, h = vp->WorkSize.y;
  const float left_w = std::clamp(w * 0.19f, 220.0f, 300.0f);
  const float right_w = std::clamp(w * 0.22f, 250.0f, 340.0f);
  const float centre_w = std::max(200.0f, w - left_w - right_w);
  const float view_h = std::floor(h * 0.55f);
  const lessons::LessonStep& step = ui.player.step();
  if (lessons::is_model_panel(step.panel) && app.model) {
    // The trained model: its panel (head grid, overview, sampling, lens, training) the whole
    // height, so that the figure the text talks about is on screen at 1280×720, and the
    // lesson beside it. The engine's controls and the pipeline set nothing a model step reads.
    const float text_w = std::clamp(w * 0.34f, 320.0f, 600.0f);
    draw_view(app, step, {0, top, w - text_w, h});
    panel_lesson(app, {w - text_w, top, text_w, h});
    return;
  }
  panel_pipeline(app, {0, top, left_w, h});
  if (step.panel == "pipeline" || step.panel == "controls") {
    lessons::LessonStep tensor = step;
    tensor.panel = "tensor";
    draw_view(app, tensor, {left_w, top, centre_w, view_h});
  } else {
    draw_view(app, step, {left_w, top, centre_w, view_h});
  }
  panel_lesson(app, {left_w, top + view_h, centre_w, h - view_h});
  panel_controls(app, {left_w + centre_w, top, right_w, h});
}

// Presenter mode: no controls; the view above, the narrative below in large type. (Slides
// are figures, slide_scenes.h: they do not go through this layout.)
void layout_presenter(App& app, LessonUi& ui) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float x = vp->WorkPos.x, top = vp->WorkPos.y, w = vp->WorkSize.x, h = vp->WorkSize.y;
  const lessons::LessonStep& step = ui.player.step();
  const float text_h = std::floor(h * 0.36f);
  const ImVec4 view{x, top, w, h - text_h};
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus;
  draw_view(app, step, view);
  ImGui::SetNextWindowPos({x, top + h - text_h});
  ImGui::SetNextWindowSize({w, text_h});
  ImGui::Begin("##presenter_text", nullptr, flags);
  app.panel_rects["lesson"] = {x, top + h - text_h, w, text_h};
  ImGui::SetCursorPosX(24);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, {4, 6});
  ImGui::Indent(24);
  draw_lesson_body(app, ui, true);
  ImGui::Unindent(24);
  ImGui::PopStyleVar();
  // Step n of m, bottom right; nothing to click: the keys drive the lesson.
  char where[32];
  std::snprintf(where, sizeof where, "%d / %d", ui.player.step_index() + 1, ui.player.step_count());
  ImGui::SetCursorPos({w - ImGui::CalcTextSize(where).x - 16, text_h - ImGui::GetFontSize() - 10});
  ImGui::TextDisabled("%s", where);
  ImGui::End();
}

}  // namespace

bool lesson_handle_keys(App& app) {
  LessonUi& ui = lesson_ui();
  if (!ui.player.is_open()) return false;
  ImGuiIO& io = ImGui::GetIO();
  if (!io.WantTextInput && ImGui::IsKeyPressed(GLFW_KEY_F5, false)) ui.presenting = !ui.presenting;
  if (!ui.presenting) {
    if (io.WantTextInput) return false;
    if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_DOWN)) go(app, +1);
    if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_UP)) go(app, -1);
    return false;
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow)) ||
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space)) || ImGui::IsKeyPressed(GLFW_KEY_PAGE_DOWN))
    go(app, +1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow)) || ImGui::IsKeyPressed(GLFW_KEY_PAGE_UP))
    go(app, -1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ui.presenting = false;
  return true;
}

bool lesson_frame(App& app) {
  LessonUi& ui = lesson_ui();
  if (!ui.opened_from_options) {
    ui.opened_from_options = true;
    want_ui_glyphs();
    std::error_code ec;
    if (!app.options.lesson.empty() && std::filesystem::is_directory(app.options.lesson, ec)) {
      // --lesson DIR: the browser over that folder.
      ui.dir = app.options.lesson;
      ui.library_loaded = true;
      std::vector<lessons::Diagnostic> problems;
      ui.library = lessons::load_lesson_dir(ui.dir, &problems, lessons::Fill::Later);
      for (const auto& p : problems) std::fprintf(stderr, "attnsim: %s\n", p.str().c_str());
      for (const auto& l : ui.library) fonts().want(l.title.ko + l.summary.ko);
      ui.browser_open = true;
    } else if (!app.options.lesson.empty() && open_lesson_file(app, app.options.lesson, app.options.lesson_at - 1)) {
      // ATTNSIM_PRESENT=1 starts the lesson in presenter mode (a classroom's launcher).
      const char* present = std::getenv("ATTNSIM_PRESENT");
      ui.presenting = present && std::strcmp(present, "1") == 0;
    }
  }
  poll_filling(ui);
  const bool open = ui.player.is_open();
  if (!(open && ui.presenting)) {
    panel_menu(app);
    lessons_menu(app);
  }
  draw_browser(app);
  if (!open) {
    set_presenter_boost(1.0f);
    return false;
  }
  // The step's button, pressed once the step's own run is the one on screen.
  if (!ui.pending_action.empty() && !app.session.busy() && app.data() &&
      app.shown_generation == app.data()->generation) {
    const std::string action = ui.pending_action;
    ui.pending_action.clear();
    if (action == "check-hidden") buglab_check_hidden(app);
    else if (action == "first-nan") buglab_first_nan(app);
    else if (action == "try-view") memory_try_view(app);
    else if (action == "measure-flash") start_flash_measurement(app);
  }
  // Presenter mode enlarges the whole view, its figures with its text (ui_scale.h: the fonts
  // are rasterised at the larger size, so they stay sharp).
  set_presenter_boost(ui.presenting ? ui.presenter_scale : 1.0f);
  if (ui.presenting)
    layout_presenter(app, ui);
  else
    layout_normal(app, ui);
  return true;
}

}  // namespace attnsim::app
