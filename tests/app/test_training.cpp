// The Training tab's worker (app/training.h): a small run on its thread, read by the panel
// with Trainer::update, which appends only the points logged since the last call.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "app/training.h"

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

void wait_done(const Trainer& t) {
  for (int i = 0; i < 6000 && t.running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
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
  const std::string dir = (std::filesystem::temp_directory_path() / "attnsim-test-trainer-nice").string();
  const int ui = ::getpriority(PRIO_PROCESS, 0);
  Trainer t;
  t.start(tiny(2000, 3), dir);
  // The worker's nice value: the highest among this process's threads while it trains.
  int highest = ui;
  for (int i = 0; i < 200 && highest == ui; ++i) {
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
      errno = 0;
      const int n = ::getpriority(PRIO_PROCESS, static_cast<id_t>(std::stoi(e.path().filename().string())));
      if (errno == 0) highest = std::max(highest, n);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  t.stop();
  REQUIRE(highest == std::min(ui + kTrainerNice, 19));
  std::filesystem::remove_all(dir);
}
