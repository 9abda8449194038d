// The engine's thread pool (parallel.h): every item exactly once, per job and across many
// jobs in a row (the spinning hand-over), errors rethrown on the caller, and a second
// caller while the pool is busy still gets its work done on threads of its own.
#include <catch2/catch.hpp>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/parallel.h"

using namespace attnsim;

TEST_CASE("parallel_for covers every item once, over thousands of back-to-back jobs", "[parallel]") {
  std::vector<int> hits(1000, 0);
  for (int job = 0; job < 3000; ++job) {
    const int64_t n = 1 + job % 1000;  // sizes from one chunk to many
    parallel_for(n, 7, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) ++hits[static_cast<size_t>(i)];
    });
  }
  // item i is in every job whose n > i: jobs j with j % 1000 >= i, three rounds of 1000
  for (int i = 0; i < 1000; ++i) REQUIRE(hits[static_cast<size_t>(i)] == 3 * (1000 - i));
}

TEST_CASE("a worker's exception reaches the caller, and the pool runs the next job", "[parallel]") {
  const int threads = std::max(2, default_threads());
  CHECK_THROWS_WITH(run_workers(threads,
                                [threads](int t) {
                                  if (t == threads - 1) throw std::runtime_error("worker failed");
                                }),
                    "worker failed");
  std::atomic<int> ran{0};
  run_workers(threads, [&](int) { ++ran; });
  CHECK(ran == threads);
}

TEST_CASE("two callers at once: the second one runs on its own threads", "[parallel]") {
  std::atomic<int64_t> sum_a{0}, sum_b{0};
  auto job = [](std::atomic<int64_t>& sum) {
    for (int rep = 0; rep < 200; ++rep)
      parallel_for(10000, 100, [&](int64_t first, int64_t last) {
        int64_t s = 0;
        for (int64_t i = first; i < last; ++i) s += i;
        sum += s;
      });
  };
  std::thread other([&] { job(sum_b); });
  job(sum_a);
  other.join();
  CHECK(sum_a == 200 * (int64_t{9999} * 10000 / 2));
  CHECK(sum_b == 200 * (int64_t{9999} * 10000 / 2));
}

TEST_CASE("default_threads counts the cores this process may use", "[parallel]") {
  CHECK(default_threads() >= 1);
  CHECK(default_threads() <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}
