// The Training tab's worker (app/training.h): a small run on its thread, read by the panel
// with Trainer::update, which appends only the points logged since the last call.
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "views/training.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

TrainSettings tiny(int64_t steps, uint64_t seed) {
  TrainSettings s;
  s.layers = 1;
  s.heads = 2;
  s.d_model = 16;
  s.batch = 4;
  s.steps = steps;
  s.checkpoint_every = steps;
  s.seed = seed;
  return s;
}

// The worker runs at nice 19: while other tests keep both cores busy (ctest -j2) it waits
// for them, so the limit is generous; the runs here take well under a second of CPU.
void wait_done(const Trainer& t) {
  for (int i = 0; i < 30000 && t.running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE_FALSE(t.running());
}

}  // namespace

TEST_CASE("Trainer::update appends each logged step once and in order and a new run replaces the old one") {
  const std::string dir = (std::filesystem::temp_directory_path() / "attnsim-test-trainer").string();
  Trainer t;
  Timeline live;
  uint64_t run = 0;
  t.start(tiny(30, 1), dir);
  // Read while it trains, as the panel does every frame: never a step twice or out of order.
  while (t.running()) {
    t.update(live, &run);
    for (size_t i = 0; i < live.points.size(); ++i) REQUIRE(live.points[i].step == static_cast<int64_t>(i) + 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  wait_done(t);
  REQUIRE(t.error().empty());
  t.update(live, &run);
  REQUIRE(live.points.size() == 30);
  REQUIRE(live.points.back().step == 30);
  REQUIRE(live.layers == 1);
  REQUIRE(live.heads == 2);
  REQUIRE(live.points.front().scored);  // step 1 is scored: the role curves start there
  const uint64_t first_run = run;
  t.update(live, &run);  // nothing new: nothing appended
  REQUIRE(live.points.size() == 30);

  t.start(tiny(5, 2), dir);
  wait_done(t);
  t.update(live, &run);
  REQUIRE(run != first_run);
  REQUIRE(live.points.size() == 5);  // the second run's points only
  REQUIRE(live.points.back().step == 5);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the training worker runs below the UI's priority and starts at once") {
  const std::string dir = (std::filesystem::temp_directory_path() / "attnsim-test-trainer-idle").string();
  REQUIRE(::sched_getscheduler(0) == SCHED_OTHER);  // the UI (this test's thread)
  const int ui_nice = ::getpriority(PRIO_PROCESS, 0);
  Trainer t;
  t.start(tiny(2000, 3), dir);
  // The worker: a thread of this process at nice 19 (a normal thread's lowest share, not
  // SCHED_IDLE, which can wait for minutes on a machine whose cores are never idle).
  bool low = false;
  for (int i = 0; i < 200 && !low; ++i) {
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
      const int tid = std::stoi(e.path().filename().string());
      low = low || (::sched_getscheduler(tid) == SCHED_OTHER && ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid)) == kTrainerNice);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Its first step lands while the test's thread waits (a core is free).
  Timeline live;
  uint64_t run = 0;
  for (int i = 0; i < 1000 && live.points.empty(); ++i) {
    t.update(live, &run);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  t.stop();
  REQUIRE(low);
  REQUIRE_FALSE(live.points.empty());
  REQUIRE(::sched_getscheduler(0) == SCHED_OTHER);  // the UI's own policy and nice untouched
  REQUIRE(::getpriority(PRIO_PROCESS, 0) == ui_nice);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the Training tab's defaults follow the model on screen unless it is a language model or too large") {
  model::ModelConfig toy;
  toy.layers = 1;
  toy.heads = 8;
  toy.d_model = 64;
  // The estimate reads the rate of the last run this process finished (other tests' tiny runs
  // measure a low one): the shape is taken exactly when its run fits the limit at that rate.
  TrainSettings as_toy;
  as_toy.layers = 1;
  as_toy.heads = 8;
  as_toy.d_model = 64;
  const bool fits = estimate_seconds(as_toy) <= kMaxTrainSeconds;
  const TrainSettings same = settings_for(toy, false);
  CHECK((same.layers == 1 && same.heads == 8 && same.d_model == 64) == fits);
  if (!fits) CHECK(same.heads == TrainSettings{}.heads);
  // The shipped language model's shape (4 layers, d 128) on text: not retrained here.
  model::ModelConfig lm = toy;
  lm.layers = 4;
  lm.heads = 4;
  lm.d_model = 128;
  const TrainSettings small = settings_for(lm, true);
  CHECK(small.layers == TrainSettings{}.layers);
  CHECK(small.d_model == TrainSettings{}.d_model);
  // A toy model too large to train in kMaxTrainSeconds here: the defaults, which are not.
  model::ModelConfig big = toy;
  big.layers = 8;
  big.d_model = 512;
  TrainSettings as_big;
  as_big.layers = 8;
  as_big.d_model = 512;
  REQUIRE(estimate_seconds(as_big) > kMaxTrainSeconds);
  CHECK(settings_for(big, false).d_model == TrainSettings{}.d_model);
  CHECK(settings_for(big, false).layers == TrainSettings{}.layers);
}

TEST_CASE("a live run's progress: step N of M and its loss and the time left at its own pace") {
  Timeline live;
  CHECK(progress_text(live, 1500, Lang::En) == "starting…");
  TimelinePoint p;
  p.step = 100;
  p.loss = 3.4123;
  p.seconds = 20;  // 0.2 s a step: 1400 steps left take 280 s
  live.points.push_back(p);
  CHECK(progress_text(live, 1500, Lang::En) == "step 100 of 1500 · loss 3.412 · about 280 s left");
  CHECK(progress_text(live, 1500, Lang::Ko) == "스텝 100 / 1500 · 손실 3.412 · 약 280초 남음");
}
