// Settings resolution and lesson folders. See lesson.h.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "engine/bugs.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/scenario.h"
#include "lessons/lesson.h"

namespace fs = std::filesystem;

namespace attnsim::lessons {

// [SECTION] Settings

namespace {
constexpr int64_t kLessonMemLimit = int64_t{1} << 30;  // 1 GiB: the shipped lessons use < 10 MiB
}  // namespace

bool Settings::empty() const {
  return !preset && !batch && !tq && !tk && !d_model && !heads && !seed && !bias &&
         !wo_identity && !train && !cross && !dropout && !input_scale && !mask && !bug &&
         !sentences && !key_sentences && !policy;
}

Settings merge(const Settings& base, const Settings& over) {
  // A new preset starts afresh: the base's overrides belonged to the old preset.
  Settings s = over.preset ? Settings{} : base;
  auto take = [](auto& dst, const auto& src) {
    if (src) dst = src;
  };
  take(s.preset, over.preset);
  take(s.batch, over.batch);
  take(s.tq, over.tq);
  take(s.tk, over.tk);
  take(s.d_model, over.d_model);
  take(s.heads, over.heads);
  take(s.seed, over.seed);
  take(s.bias, over.bias);
  take(s.wo_identity, over.wo_identity);
  take(s.train, over.train);
  take(s.cross, over.cross);
  take(s.dropout, over.dropout);
  take(s.input_scale, over.input_scale);
  take(s.mask, over.mask);
  take(s.bug, over.bug);
  take(s.sentences, over.sentences);
  take(s.key_sentences, over.key_sentences);
  take(s.policy, over.policy);
  return s;
}

Resolved resolve(const Settings& s) {
  Resolved r;
  r.preset = s.preset.value_or("default");
  const Scenario& preset = find_scenario(r.preset);
  r.config = preset.config;
  r.sentences = preset.sentences;
  r.key_sentences = preset.key_sentences;
  r.input_scale = preset.input_scale;
  MhaConfig& c = r.config;
  if (s.batch) c.batch = *s.batch;
  if (s.tq) c.tq = *s.tq;
  if (s.tk) c.tk = *s.tk;
  if (s.d_model) c.d_model = *s.d_model;
  if (s.heads) c.heads = *s.heads;
  if (s.seed) c.seed = static_cast<uint64_t>(*s.seed);
  if (s.bias) c.bias = *s.bias;
  if (s.wo_identity) c.wo_identity = *s.wo_identity;
  if (s.train) c.train = *s.train;
  if (s.dropout) c.dropout = static_cast<float>(*s.dropout);
  if (s.input_scale) r.input_scale = static_cast<float>(*s.input_scale);
  if (s.mask) c.mask = parse_mask_spec(*s.mask == "none" ? "" : *s.mask);
  if (s.bug) c.bug = *s.bug == "none" ? Bug::None : parse_bug(*s.bug);
  if (s.sentences) r.sentences = *s.sentences;
  if (s.key_sentences) r.key_sentences = *s.key_sentences;
  if (s.policy) {
    if (!preset.decode.enabled) throw Error("policy '" + *s.policy + "' needs a decode scenario; '" + r.preset + "' is not one");
    r.policy = parse_cache_policy(*s.policy).text();
  }
  // Cross-attention: explicit, or implied by different lengths or key sentences.
  if (s.cross) c.self_attention = !*s.cross;
  if (c.tq != c.tk || (s.key_sentences && !s.key_sentences->empty())) c.self_attention = false;
  if (c.self_attention) c.tk = c.tq;
  validate(c);
  // The same checked prediction as the CLI, before anything is allocated: a lesson's state
  // must fit (and run at once) on a teacher's laptop.
  const std::string sizes = "B=" + std::to_string(c.batch) + " Tq=" + std::to_string(c.tq) + " Tk=" +
                            std::to_string(c.tk) + " d_model=" + std::to_string(c.d_model) + " h=" +
                            std::to_string(c.heads);
  int64_t need = 0;
  try {
    need = (Size(predict_input_bytes(c)) + predict_weight_bytes(c.d_model, c.bias) + predict_trace_bytes(c)).value();
  } catch (const Error& e) {
    throw Error(sizes + " is too large to count its memory: " + e.what());
  }
  const int64_t limit = std::min(kLessonMemLimit, effective_mem_limit(c));
  if (need > limit)
    throw Error(sizes + " needs " + human_bytes(need) + " (inputs, weights and trace), over a lesson's limit of " + human_bytes(limit));
  return r;
}

void apply(const Resolved& r, Scenario& s) {
  const MhaConfig preset_reference = s.reference;
  s.config = r.config;
  s.sentences = r.sentences;
  s.key_sentences = r.key_sentences;
  s.input_scale = r.input_scale;
  if (!r.policy.empty()) s.decode.policy = r.policy;
  if (s.has_reference) {
    s.reference = r.config;
    s.reference.mask = preset_reference.mask;
    s.reference.bug = preset_reference.bug;
  }
}

CostConfig resolve_cost(const CostSettings& s) {
  CostConfig c;
  if (s.d_model) c.d_model = *s.d_model;
  if (s.heads) c.heads = *s.heads;
  if (s.head_dim) {
    if (s.heads && !s.d_model) c.d_model = checked_mul(*s.heads, *s.head_dim, "heads × head_dim");
    else if (s.d_model && !s.heads) {
      if (*s.head_dim <= 0 || *s.d_model % *s.head_dim != 0)
        throw Error("d_model " + std::to_string(*s.d_model) + " is not a multiple of head_dim " +
                    std::to_string(*s.head_dim));
      c.heads = *s.d_model / *s.head_dim;
    } else if (s.heads && s.d_model && checked_mul(*s.heads, *s.head_dim, "heads × head_dim") != *s.d_model) {
      throw Error("heads x head_dim = " + std::to_string(*s.heads * *s.head_dim) +
                  " but d_model = " + std::to_string(*s.d_model));
    }
  }
  if (s.layers) c.layers = *s.layers;
  if (s.seq) c.seq = *s.seq;
  if (s.batch) c.batch = *s.batch;
  if (s.kv_heads) c.kv_heads = *s.kv_heads;
  if (s.dtype) c.dtype = parse_cost_dtype(*s.dtype);
  compute_cost(c);  // validates, and refuses sizes whose figures would not fit in 64 bits
  return c;
}

Settings Lesson::settings_at(size_t step) const {
  if (step >= steps.size()) return settings;
  return merge(settings, steps[step].settings);
}

std::vector<TextRef> lesson_texts(Lesson& l) {
  std::vector<TextRef> refs;
  auto add = [&](Text& t, const std::string& label, const Settings& base, int step,
                 const Quiz::Option* option = nullptr) {
    if (!t.ko.empty() || !t.en.empty() || !t.ko_src.text.empty() || !t.en_src.text.empty())
      refs.push_back(TextRef{&t, label, base, step, option});
  };
  add(l.title, "the lesson's title", l.settings, -1);
  add(l.summary, "the lesson's summary", l.settings, -1);
  for (size_t i = 0; i < l.steps.size(); ++i) {
    LessonStep& s = l.steps[i];
    const int si = static_cast<int>(i);
    const std::string label = "step " + std::to_string(i + 1) + " (\"" + s.id + "\")";
    const Settings base = l.settings_at(i);
    add(s.title, label + ".title", base, si);
    add(s.short_text, label + ".short", base, si);
    add(s.text, label + ".text", base, si);
    if (s.task) {
      const Settings goal = merge(base, s.task->goal);
      add(s.task->prompt, label + ".task.prompt", goal, si);
      add(s.task->done, label + ".task.done", goal, si);
      add(s.task->hint, label + ".task.hint", goal, si);
    }
    if (s.quiz) {
      add(s.quiz->question, label + ".quiz.question", base, si);
      add(s.quiz->explanation, label + ".quiz.explanation", base, si);
      for (size_t k = 0; k < s.quiz->options.size(); ++k)
        add(s.quiz->options[k].text, label + ".quiz.option[" + std::to_string(k + 1) + "].text",
            base, si, &s.quiz->options[k]);
    }
  }
  return refs;
}

// [SECTION] Folders

std::vector<std::string> lesson_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".toml") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) throw Error("no lesson files (*.toml) in " + p);
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      throw Error("no such file or folder: " + p);
    }
  }
  return files;
}

std::vector<Lesson> load_lesson_dir(const std::string& dir, std::vector<Diagnostic>* diagnostics, Fill fill) {
  std::vector<Lesson> lessons;
  std::vector<std::string> files;
  try {
    files = lesson_files({dir});
  } catch (const Error& e) {
    if (diagnostics) diagnostics->push_back(Diagnostic{dir, 0, 0, e.what()});
    return lessons;
  }
  for (const auto& f : files) {
    LoadResult r = load_lesson(f, fill);
    if (diagnostics) diagnostics->insert(diagnostics->end(), r.diagnostics.begin(), r.diagnostics.end());
    if (r.lesson) lessons.push_back(std::move(*r.lesson));
  }
  std::stable_sort(lessons.begin(), lessons.end(), [](const Lesson& a, const Lesson& b) {
    return a.order != b.order ? a.order < b.order : a.id < b.id;
  });
  return lessons;
}

void check_lesson_set(const std::vector<Lesson>& lessons, std::vector<Diagnostic>& out) {
  std::map<std::string, std::string> ids;
  for (const auto& l : lessons) {
    auto [it, fresh] = ids.emplace(l.id, l.path);
    if (!fresh) out.push_back(Diagnostic{l.path, 0, 0, "duplicate lesson id '" + l.id + "' (also in " + it->second + ")"});
  }
}

std::string default_lesson_dir(const std::string& argv0) {
  std::error_code ec;
  if (const char* env = std::getenv("ATTNSIM_LESSONS"); env && *env && fs::is_directory(env, ec))
    return env;
#ifdef ATTNSIM_LESSON_DIR
  if (fs::is_directory(ATTNSIM_LESSON_DIR, ec)) return ATTNSIM_LESSON_DIR;
#endif
  if (!argv0.empty()) {
    const fs::path exe = fs::weakly_canonical(fs::path(argv0), ec);
    for (fs::path p = exe.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
      if (fs::is_directory(p / "lessons", ec)) return (p / "lessons").string();
  }
  if (fs::is_directory("lessons", ec)) return "lessons";
  return "";
}

}  // namespace attnsim::lessons
