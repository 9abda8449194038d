// The Training tab's worker (app/training.h): a small run on its thread, read by the panel
// with Trainer::update, which appends only the points logged since the last call.
#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "views/training.h"

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

// The worker runs SCHED_IDLE: while other tests keep both cores busy (ctest -j2) it waits
// for them, so the limit is generous; the runs here take well under a second of CPU.
void wait_done(const Trainer& t) {
  for (int i = 0; i < 30000 && t.running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE_FALSE(t.running());
}

}  // namespace

TEST_CASE("Trainer::update appends each logged step once, in order, and a new run replaces the old one") {
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

TEST_CASE("the training worker runs below the UI's priority") {
  const std::string dir = (std::filesystem::temp_directory_path() / "attnsim-test-trainer-idle").string();
  REQUIRE(::sched_getscheduler(0) == SCHED_OTHER);  // the UI (this test's thread)
  Trainer t;
  t.start(tiny(2000, 3), dir);
  // The worker: a thread of this process that runs SCHED_IDLE while it trains.
  bool idle = false;
  for (int i = 0; i < 200 && !idle; ++i) {
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
      idle = idle || ::sched_getscheduler(static_cast<pid_t>(std::stoi(e.path().filename().string()))) == SCHED_IDLE;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  t.stop();
  REQUIRE(idle);
  REQUIRE(::sched_getscheduler(0) == SCHED_OTHER);  // the UI's own policy untouched
  std::filesystem::remove_all(dir);
}
