// Training as a sliced task (a thread on the desktop, between frames in the browser) and
// the timeline. See training.h.
#include "views/training.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <optional>

#ifndef __EMSCRIPTEN__
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "engine/blas_kernels.h"
#include "engine/error.h"
#include "engine/nesting.h"
#include "engine/read_file.h"
#include "model/training/tasks.h"
#include "views/i18n.h"

namespace attnsim::app {

namespace {

// A training log is a line per logged step: the longest shipped one is about 1 MB.
constexpr int64_t kMaxTrainLogBytes = int64_t{64} << 20;

// FLOP/s the last finished run here reached (0 = none yet).
std::atomic<double> g_measured_flops{0};

// Forward FLOPs of one step: per layer the four d x d projections and the two T x T products,
// then the unembedding; the backward costs about twice the forward.
double step_flops(const TrainSettings& s, int64_t vocab, int64_t len) {
  const double bt = static_cast<double>(s.batch) * static_cast<double>(len), d = static_cast<double>(s.d_model);
  const double layer = 4 * 2 * bt * d * d + 2 * 2 * bt * static_cast<double>(len) * d;
  const double forward = static_cast<double>(s.layers) * layer + 2 * bt * d * static_cast<double>(vocab);
  return 3 * forward;
}

model::HeadTable table_from_json(const nlohmann::json& j) {
  model::HeadTable t;
  const auto& ind = j.at("induction");
  t.layers = static_cast<int64_t>(ind.size());
  t.heads = t.layers ? static_cast<int64_t>(ind[0].size()) : 0;
  t.cells.resize(static_cast<size_t>(t.layers * t.heads));
  auto fill = [&](const char* key, double model::HeadScores::*f) {
    if (!j.contains(key)) return;
    for (int64_t l = 0; l < t.layers; ++l)
      for (int64_t h = 0; h < t.heads; ++h)
        t.cells[static_cast<size_t>(l * t.heads + h)].*f = j[key].at(static_cast<size_t>(l)).at(static_cast<size_t>(h));
  };
  fill("induction", &model::HeadScores::induction);
  fill("previous", &model::HeadScores::previous);
  fill("duplicate", &model::HeadScores::duplicate);
  fill("first", &model::HeadScores::first);
  fill("diagonal", &model::HeadScores::diagonal);
  return t;
}

}  // namespace

double best_induction(const model::HeadTable& t) {
  double m = 0;
  for (const auto& c : t.cells) m = std::max(m, c.induction);
  return m;
}

// [SECTION] timeline

int64_t Timeline::phase_change_step() const {
  int64_t best_step = -1;
  double best = kPhaseJump, prev = -1;
  for (const TimelinePoint& p : points) {
    if (!p.scored) continue;
    const double now = best_induction(p.scores);
    if (prev >= 0 && now - prev >= best) {
      best = now - prev;
      best_step = p.step;
    }
    prev = now;
  }
  return best_step;
}

TimelinePoint timeline_point(const model::StepReport& r) {
  TimelinePoint p;
  p.step = r.step;
  p.loss = r.loss;
  p.seconds = r.seconds;
  auto part = [&](int k) { return static_cast<size_t>(k) < r.part_loss.size() ? r.part_loss[static_cast<size_t>(k)] : -1.0; };
  p.loss_first = part(model::kFirst);
  p.loss_repeat = part(model::kRepeat);
  p.scored = r.scored;
  if (r.scored) p.scores = r.scores;
  return p;
}

Timeline read_train_log(const std::string& path) {
  std::istringstream in(read_text_file(path, kMaxTrainLogBytes));  // Error naming the path
  Timeline t;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    try {
      const nlohmann::json j = parse_json(line, path + ":" + std::to_string(n));  // nesting bounded (nesting.h)
      TimelinePoint p;
      p.step = j.at("step");
      p.loss = j.at("loss");
      p.loss_first = j.value("loss_first", -1.0);
      p.loss_repeat = j.value("loss_repeat", -1.0);
      p.heldout = j.value("heldout_loss", -1.0);
      p.seconds = j.value("seconds", 0.0);
      if (j.contains("scores")) {
        p.scored = true;
        p.scores = table_from_json(j["scores"]);
        t.layers = p.scores.layers;
        t.heads = p.scores.heads;
      }
      t.points.push_back(std::move(p));
    } catch (const nlohmann::json::exception& e) {
      throw Error(path + ": line " + std::to_string(n) + ": " + e.what());
    }
  }
  return t;
}

// [SECTION] trainer

double estimate_seconds(const TrainSettings& s) {
  const double rate = g_measured_flops.load() > 0 ? g_measured_flops.load() : kAssumedFlops;
  const model::ModelConfig c;  // vocab and length of the built-in task
  return static_cast<double>(s.steps) * step_flops(s, c.vocab, c.seq_len) / rate;
}

TrainSettings settings_for(const model::ModelConfig& shown, bool text_model) {
  TrainSettings s;
  if (text_model) return s;
  TrainSettings same = s;
  same.layers = shown.layers;
  same.heads = shown.heads;
  same.d_model = shown.d_model;
  model::ModelConfig c;
  c.layers = same.layers;
  c.heads = same.heads;
  c.d_model = same.d_model;
  try {
    model::validate(c);
  } catch (const Error&) {
    return s;
  }
  return estimate_seconds(same) <= kMaxTrainSeconds ? same : s;
}

std::string progress_text(const Timeline& live, int64_t planned, Lang lang) {
  if (live.points.empty()) return tr_in(lang, "starting…");
  const TimelinePoint& p = live.points.back();
  const double left = p.step > 0 ? p.seconds / static_cast<double>(p.step) * static_cast<double>(planned - p.step) : 0;
  return trf_in(lang, "step %lld of %lld · loss %.3f · about %.0f s left", static_cast<long long>(p.step),
                static_cast<long long>(planned), p.loss, left);
}

Trainer::~Trainer() { stop(); }

void Trainer::stop() {
  stop_ = true;
  if (worker_.valid()) worker_.wait();  // in the browser: the next slice sees stop_ and ends the run
  running_ = false;
}

void Trainer::start(const TrainSettings& s, const std::string& out_dir) {
  stop();
  model::ModelConfig c;
  c.layers = s.layers;
  c.heads = s.heads;
  c.d_model = s.d_model;
  c.seed = s.seed;
  model::validate(c);  // throws naming the problem (d_model % heads, ...)
  if (s.steps < 1) throw Error("a run needs at least one step");
  const double est = estimate_seconds(s);
  if (est > kMaxTrainSeconds)
    throw Error("this run would take about " + std::to_string(static_cast<int64_t>(est / 60 + 0.5)) +
                " minutes here (over " + std::to_string(static_cast<int64_t>(kMaxTrainSeconds / 60)) +
                "); use fewer steps or a smaller model");
  std::error_code ec;
  std::filesystem::remove_all(out_dir, ec);
  settings_ = s;
  out_dir_ = out_dir;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    timeline_ = {};
    ++run_id_;
    timeline_.layers = s.layers;
    timeline_.heads = s.heads;
    error_.clear();
  }
  stop_ = false;
  running_ = true;
  // The run's state lives in its task: on the desktop a thread takes the steps back to back;
  // in the browser the main loop takes as many as fit between two frames (tasks.h).
  struct Run {
    std::optional<model::Model> model;
    std::optional<model::TrainRun> run;
    std::optional<BlasOnCallingThread> one_core;
    double seconds = 0;
    int64_t done = 0;
  };
  auto run = std::make_shared<Run>();
  auto step = [this, c, run]() -> bool {
    try {
      if (!run->run) {  // the first slice, on the thread that trains
        // One core at most for the run's products: OpenBLAS's own threads run at the UI's
        // priority and spin between products (sched_yield in a profile of a live run), and the
        // model's products are too small to gain from them. OpenBLAS's thread count is process
        // wide: the UI's products run on their calling thread too while the run trains.
        run->one_core.emplace();
        model::TrainOptions o;
        o.steps = settings_.steps;
        o.batch = settings_.batch;
        o.adamw.lr = static_cast<float>(settings_.lr);
        o.checkpoint_every = settings_.checkpoint_every;
        o.score_every = std::max<int64_t>(25, settings_.steps / 40);  // ~40 points on the role curves
        o.out_dir = out_dir_;
        model::TrainHooks hooks;
        hooks.on_step = [this, run](const model::StepReport& r) {
          std::lock_guard<std::mutex> lock(mutex_);
          timeline_.points.push_back(timeline_point(r));
          run->seconds = r.seconds;
          run->done = r.step;
        };
        hooks.stop = [this] { return stop_.load(); };
        run->model.emplace(model::init_model(c));
        run->run.emplace(*run->model, o, hooks);
      }
      if (run->run->step()) return true;
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = e.what();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::string("training failed: ") + e.what();
    }
    run->one_core.reset();
    if (run->done > 0 && run->seconds > 0)
      g_measured_flops = static_cast<double>(run->done) * step_flops(settings_, c.vocab, c.seq_len) / run->seconds;
    running_ = false;
    return false;
  };
  // Below the UI: the frame (the UI thread and llvmpipe's rasteriser threads) goes first and
  // the run takes the CPU they leave. At nice 19 the thread weighs 15 against a frame
  // thread's 1024 (at nice +10 it weighed 110, and frames waited on it); the engine's
  // parallel_for threads it starts inherit the nice value.
  auto below_the_ui = [] {
#ifndef __EMSCRIPTEN__
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kTrainerNice);
#endif
  };
  worker_ = start_sliced(step, below_the_ui);
}

void Trainer::update(Timeline& into, uint64_t* run) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (*run != run_id_) {
    into = {};
    *run = run_id_;
  }
  into.layers = timeline_.layers;
  into.heads = timeline_.heads;
  into.points.insert(into.points.end(), timeline_.points.begin() + static_cast<std::ptrdiff_t>(into.points.size()),
                     timeline_.points.end());
}

std::string Trainer::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace attnsim::app
