// Lessons: the data model, the loader and the checker. No GUI, no command line.
//
// Index
//   [SECTION] Text in two languages           Text
//   [SECTION] Settings a lesson puts on screen Settings
//   [SECTION] Claims the engine must confirm  Claim
//   [SECTION] Try-it tasks and quizzes        Task, Quiz
//   [SECTION] Steps and lessons               LessonStep, Lesson
//   [SECTION] Loading and checking            Diagnostic, load_lesson, check_lesson
//
// One TOML file per lesson in lessons/ (the format is documented, with an example, in
// lessons/FORMAT.md). A lesson is data only: no code and no paths. Every figure it states is
// either a claim (a [[step.claim]] the checker recomputes with the engine) or a quiz answer
// that names the engine quantity computing it (quantity.h), so nothing is typed in by hand
// without the engine agreeing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/cost.h"
#include "engine/mha.h"
#include "engine/scenario.h"

namespace attnsim::lessons {

// [SECTION] Text in two languages ----------------------------------------------------------

enum class Lang { Ko, En };
Lang parse_lang(const std::string& code);  // "ko" / "en"; throws Error otherwise

// Where a value came from in its file (1-based; 0 = unknown).
struct Where {
  int line = 0, column = 0;
};

// Light markup (markup.h): **bold**, `code`, lines starting "- " are list items, blank lines
// separate paragraphs, and the number marks of prose.h: {value:NAME} (filled by the engine
// when the lesson loads), {quote:TEXT} (a figure from the article or the literature) and
// {math:N} (a constant of a formula).
struct Text {
  std::string ko, en;  // as shown: every {value:...} replaced by the engine's figure
  const std::string& get(Lang lang) const { return lang == Lang::Ko ? ko : en; }
  bool empty() const { return ko.empty() && en.empty(); }

  // As written in the file, and where each byte of it stands there (for file:line:column).
  struct Source {
    std::string text;
    std::vector<Where> at;  // one per byte of text (+1 for the end)
    Where where(size_t offset) const;
  };
  Source ko_src, en_src;
  // The figures each language states (filled values, quotes, math constants), in order.
  std::vector<std::string> ko_values, en_values;
};

// [SECTION] Settings a lesson puts on screen -----------------------------------------------
//
// A scenario preset (engine/scenario.h) plus overrides. A step may override again; the
// simulator's state at a step is lesson.scenario + step.scenario applied in that order.
struct Settings {
  std::optional<std::string> preset;  // "default", "article", "query-padding-nan", ...
  std::optional<int64_t> batch, tq, tk, d_model, heads;
  std::optional<int64_t> seed;
  std::optional<bool> bias, wo_identity, train, cross;
  std::optional<double> dropout, input_scale;
  std::optional<std::string> mask;  // parse_mask_spec text ("none" clears it)
  std::optional<std::string> bug;   // a name from all_bugs() or "none"
  std::optional<std::vector<std::string>> sentences, key_sentences;
  std::optional<std::string> policy;  // decode scenarios' cache policy: "full", "window=W", "sink=S,window=W"

  bool empty() const;
};
// `over` applied on top of `base` (set fields of `over` win). When `over` names a preset,
// it starts from that preset alone: the overrides of `base` are dropped.
Settings merge(const Settings& base, const Settings& over);

// The resolved state: what forward() runs.
struct Resolved {
  std::string preset = "default";
  MhaConfig config;
  std::vector<std::string> sentences, key_sentences;
  float input_scale = 1.0f;
  std::string policy;  // the decode cache policy ("" = the preset's)
};
// Throws attnsim::Error (unknown preset, bad mask text, d_model % heads, ...).
Resolved resolve(const Settings& settings);
// Puts the resolved settings into the preset's scenario; a bug-lab scenario's correct run
// beside it keeps the preset's mask and bug at these sizes.
void apply(const Resolved& resolved, Scenario& scenario);

// Sizes for the closed-form cost model (engine/cost.h).
struct CostSettings {
  std::optional<int64_t> d_model, heads, head_dim, layers, seq, batch, kv_heads;
  std::optional<std::string> dtype;
};
CostConfig resolve_cost(const CostSettings& settings);  // throws Error

// Sizes for the FlashAttention IO model (engine/flash.h, closed forms).
struct FlashSettings {
  std::optional<int64_t> batch, heads, tq, tk, head_dim, block_q, block_k;
};

// A shipped checkpoint for model.* (model_quantity.h): a folder name under assets/models/,
// a saved step of its run, the head a per-head field reads, the heads knocked out.
struct ModelSettings {
  std::optional<std::string> checkpoint;  // "induction" (default): assets/models/induction
  std::optional<int64_t> step;            // checkpoints/step-NNNNNN (or the final model's step)
  std::optional<int64_t> layer, head;     // per-head fields: previous, induction, role, ...
  std::optional<std::string> ablate;      // "1.0,1.1": zero-ablated for the loss fields
  std::optional<int64_t> repeat;          // length_accuracy: BOS + r r r' r' ... of this length
  std::optional<std::string> role;        // role_count: heads labelled this role
  std::optional<int64_t> kv_heads;        // the loss fields on model::convert_to_gqa(model, kv_heads):
                                          // K/V heads mean-pooled, no uptraining
  std::optional<int64_t> keep;            // the loss fields with every layer pruned to its `keep`
                                          // most important heads (model::prune_to)
  std::optional<std::string> runs;        // runs_*: "a,b,c", checkpoints of one recipe (seeds 1..N)
  std::optional<std::string> of;          // runs_min / median / max: the field read per run
                                          // (default repeat_accuracy); prompts_*: per sequence
  std::optional<int64_t> prompts;         // prompts_*: the first N sequences of the whole pass's
                                          // kind (whole_quantity.h), row 0 the one it reads
  // sample_* and loop_share (whole_quantity.h): model/sampling.h's options; absent = greedy
  std::optional<double> temperature, top_p;
  std::optional<int64_t> top_k, seed;
};

// [SECTION] Claims the engine must confirm -------------------------------------------------
//
// A claim names a quantity (lessons/quantity.h lists them) computed under the step's
// settings (+ its own overrides), and what it must be. Used three ways: [[step.claim]]
// (a fact the narrative states, checked by `lesson check`), a task's goal (checked live
// against what the learner set), and a quiz's answer (recomputed by `lesson check`).
struct Claim {
  std::string id;                  // optional; {value:ID} in any text of the lesson shows it
  std::string quantity;            // "trace.scores.shape", "cost.kv_cache_bytes", ...
  Settings settings;               // overrides for trace.* / alpha.* / diff.* / ...
  Settings against;                // the second run of diff.* quantities
  CostSettings cost;               // for cost.*
  FlashSettings flash;             // for flash.*
  ModelSettings model;             // for model.*
  int64_t head = -1;               // ablate.*: the head zeroed; alpha.*: only this head (-1 all)
  std::string step_b;              // for pair.*: the second step ("ctx_concat")
  // What it must be: at most one of these is set (none: a claim with an id that only
  // names a figure for the text).
  std::optional<double> equals;
  std::optional<std::vector<int64_t>> equals_list;  // shapes and strides
  std::optional<std::string> equals_text;           // run.first_nan_step, ...
  std::optional<double> at_least, at_most;
  double tolerance = 0;            // relative, for equals
  std::string about;               // what the claim says, for messages
  Where where;
};

// [SECTION] Try-it tasks and quizzes -------------------------------------------------------

// A task on the model panel: the learner knocks heads out with the head grid's toggles.
struct ModelGoal {
  int64_t knock_out = 1;  // how many heads must be knocked out (zero ablation)
  std::string solution;   // one set that reaches the goal ("0.1"): `lesson check` proves the
                          // claims hold with it, and not with no head knocked out
};

// A try-it task: the learner changes a setting; the goal is checked against the
// simulator's state. `goal` conditions are settings the state must have (only the set
// fields are compared); `claims` are engine facts that must then hold. On the model panel
// (`model_goal`) the goal is a number of heads knocked out, and the claims are model.*
// quantities read with the learner's heads knocked out (player.h live_claim).
struct Task {
  Text prompt;    // what to try
  Text done;      // what happened (shown when the goal is met)
  Text hint;      // optional
  Settings goal;  // e.g. heads = 1
  std::optional<std::string> goal_step;  // the trace step the learner must be looking at
  std::optional<ModelGoal> model_goal;
  std::vector<Claim> claims;
  Where where;
};

enum class QuizKind { Number, Choice };

struct Quiz {
  QuizKind kind = QuizKind::Number;
  Text question;
  Text explanation;
  // Number: the stored answer, and the claim that recomputes it (claim.quantity).
  double answer = 0;
  double tolerance = 0;            // relative; the learner's answer is accepted within it
  std::string unit;                // "B", "params", ... (shown beside the input)
  Claim source;                    // quantity + its settings; equals = answer
  // Choice: each option is a statement with the engine claims that make it true. The
  // right one (1-based `correct`) is the only option whose claims all hold.
  struct Option {
    Text text;
    std::vector<Claim> claims;
    Where where;
  };
  std::vector<Option> options;
  int correct = 0;
  Where correct_where;
  Where where;
};

struct Diagnostic {
  std::string file;
  int line = 0, column = 0;
  std::string message;
  std::string str() const;  // "file:line:column: message"
};

// [SECTION] Steps and lessons --------------------------------------------------------------

// Panels a step can bring forward (the app's names).
// "model" and "timeline" open the app's trained-model scenario (its head grid, its training
// tab) instead of the step's engine scenario.
inline constexpr const char* kPanelNames[] = {"pipeline", "tensor", "memory", "buglab", "controls",
                                              "flash", "cost", "lesson", "decode", "model", "timeline"};
inline bool is_model_panel(const std::string& panel) { return panel == "model" || panel == "timeline"; }
bool is_panel_name(const std::string& name);
// The app's button actions a step can press.
// "ablate-induction" (model / timeline panels): opens the model with every head labelled
// induction knocked out (the app's scenario model-ablate-induction).
// "measure-flash" (flash panel): starts "Measure on this machine" (views/flash_measure.h).
// "show-contribution" (model panel): the head grid draws each position's share of ‖α·W_O v‖
// instead of alpha (ModelView::set_show_contribution).
inline constexpr const char* kActionNames[] = {"check-hidden",     "first-nan",     "try-view",
                                               "ablate-induction", "measure-flash", "show-contribution",
                                               // a model panel's tab (panel_whole.h)
                                               "open-overview",    "open-sampling", "open-lens"};

// A head of a trained model: layer.head, as the head grid and the texts write it ("2.1").
struct HeadName {
  int64_t layer = 0, head = 0;
};
// Reads "2.1" or "2.1,0.3"; nullopt for anything else.
std::optional<std::vector<HeadName>> parse_head_names(const std::string& text);
inline constexpr const char* kWholePassSequence = "whole-pass";

struct LessonStep {
  std::string id;          // unique in the lesson
  Text title;
  Text short_text;         // one or two lines for the slide; default: first paragraph
  Text text;               // the narrative (markup)
  std::string panel = "tensor";
  std::string trace_step;  // one of kStepNames; empty = the preset's focus step
  int64_t batch = 0;       // the batch element shown
  std::optional<int64_t> head;   // a head to highlight
  std::vector<int64_t> rows, cols;  // cells to highlight (query rows, key columns)
  double zoom = 1.0;
  std::optional<std::vector<int64_t>> tile;  // flash panel: {query block, key block}
  std::string action;      // a button the step presses once its run is on screen:
                           // "check-hidden", "first-nan", "try-view" (kActionNames)
  // What the text names, shown (FORMAT.md: highlight): heads of the trained model's head grid
  // (layer.head), selected, outlined and scrolled into view; a token of the step's sequence
  // (its row framed in every head map); a bar of the Sampling tab (step_marks.h). check_lesson
  // proves each exists.
  std::vector<HeadName> highlight_heads;
  std::string highlight_token, highlight_bar;
  Where highlight_where;
  // What a model-panel step puts in the model panel (FORMAT.md: sequence): "" (what it opens
  // on), kWholePassSequence (the sequence the whole pass's model.* fields read), or a text (a
  // language model's words).
  std::string sequence;
  Settings settings;       // overrides at this step
  std::vector<Claim> claims;
  std::optional<Task> task;
  std::optional<Quiz> quiz;
  Where where;
};

struct Lesson {
  std::string path;   // the file it came from
  std::string id;     // unique across lessons/
  int64_t order = 0;  // position in the browser
  Text title, summary;
  Settings settings;  // the lesson's scenario
  std::vector<LessonStep> steps;
  // Placeholders the loader could not fill ({value:NAME} naming nothing, or the engine
  // refusing); check_lesson reports them, the app shows "?" in their place.
  std::vector<Diagnostic> fill_problems;

  // The state at step i: lesson settings + step overrides.
  Settings settings_at(size_t step) const;
};

// [SECTION] Loading and checking -----------------------------------------------------------

struct LoadResult {
  std::optional<Lesson> lesson;        // set when the file parsed and its shape was valid
  std::vector<Diagnostic> diagnostics;  // empty = fine
};

// What load_lesson does with the {value:...} marks.
enum class Fill {
  Values,  // every one becomes the engine's figure (fill_values): `lesson check`, slides, tests
  Later,   // the lesson's own title and summary are filled (they name no trained model:
           // check_lesson says so), every other mark shows kPendingFigure (fill_pending) until
           // a ValueFill (value_fill.h) hands its figure over: the app opens a lesson at once
           // and fills the step on screen first, on a worker
};
// What a figure not computed yet shows.
inline constexpr const char* kPendingFigure = "…";

// Parses and validates the shape of one lesson file: TOML syntax, known/missing keys, types,
// both languages, known panels/steps/scenarios/bugs/quantities; then fills every
// {value:...} placeholder with the engine's figure (problems go to lesson.fill_problems).
// Never throws.
LoadResult load_lesson(const std::string& path, Fill fill = Fill::Values);
LoadResult load_lesson_text(const std::string& text, const std::string& path, Fill fill = Fill::Values);

// Fills every {value:...} of the lesson's texts with the engine's figure (Text::ko / en) and
// records the figures each language states (Text::ko_values / en_values). A placeholder it
// cannot fill shows "?" and lands in lesson.fill_problems. load_lesson calls it.
void fill_values(Lesson& lesson);
// Every {value:...} of the step texts shows kPendingFigure, the title and summary their
// figures (Fill::Later).
void fill_pending(Lesson& lesson);

// Every text of a lesson with what its placeholders are evaluated under: the lesson's
// settings (title, summary), a step's (its texts, the quiz), a task's goal (task texts).
struct TextRef {
  Text* text = nullptr;
  std::string label;           // step 2 ("x").text, for messages
  Settings base;
  int step = -1;               // -1: the lesson's own title and summary
  const Quiz::Option* option = nullptr;  // set for a choice option's text
};
std::vector<TextRef> lesson_texts(Lesson& lesson);

// Runs the engine: every claim, every quiz answer (a number equals the engine's; a choice is
// the only option whose claims hold), every task's claims, every step's settings; and the
// prose (prose.h): no bare number, the same figures in ko and en. Appends diagnostics (with
// locations) for anything wrong.
void check_lesson(const Lesson& lesson, std::vector<Diagnostic>& out);
// Where a text calls a level "chance" or "random" (en: chance, random, randomly; ko: 우연,
// 무작위, 찍기 ...; not random weights / 무작위 가중치, an initialisation): byte offsets, and
// the words in `words`. check_lesson requires a baseline quantity (model.chance_accuracy,
// model.uniform_loss, model.seen_accuracy, alpha.entropy_uniform) in the same step's texts.
std::vector<size_t> chance_words_at(const std::string& text, std::vector<std::string>* words = nullptr);

// The lesson files under a folder (*.toml, sorted by name) or the files given.
// Throws Error for a path that does not exist.
std::vector<std::string> lesson_files(const std::vector<std::string>& paths);

// Loads every lesson in a folder, sorted by order then id; files that fail to load are
// reported in `diagnostics` and left out.
std::vector<Lesson> load_lesson_dir(const std::string& dir, std::vector<Diagnostic>* diagnostics,
                                    Fill fill = Fill::Values);

// Across lessons: duplicate ids.
void check_lesson_set(const std::vector<Lesson>& lessons, std::vector<Diagnostic>& out);

// The built-in lessons folder: $ATTNSIM_LESSONS, else <source>/lessons if it exists, else
// lessons/ next to the executable's folder; "" when none is found.
std::string default_lesson_dir(const std::string& argv0 = "");

}  // namespace attnsim::lessons
