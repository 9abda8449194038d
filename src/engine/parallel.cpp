// The engine's pool threads (parallel.h): started on first use, grown to the widest job
// asked for, spinning briefly after each job and then parked on a condition variable,
// joined at exit.
#include "parallel.h"

#include <chrono>
#include <condition_variable>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sched.h>
#endif

namespace attnsim {

// The cores this process may run on: under taskset or a container's cpuset that is fewer
// than the machine has, and more threads than cores only take turns.
static int usable_cores() {
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int default_threads() {
  static const int n = usable_cores();
  return n;
}

namespace detail {

namespace {

// A worker that has just finished a job spins for kSpin before it parks: a training step
// runs its parallel loops a few tens of microseconds apart, and waking a parked thread
// through the kernel costs about that much again on these virtual machines. kSpin is short
// enough that an idle pool takes no core from OpenBLAS's threads for long.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  bool run(int threads, const std::function<void(int)>& task) {
    std::unique_lock<std::mutex> job(busy_, std::try_to_lock);
    if (!job) return false;
    {
      std::lock_guard<std::mutex> lock(m_);
      while (static_cast<int>(threads_.size()) + 1 < threads) {
        const int id = static_cast<int>(threads_.size()) + 1;
        threads_.emplace_back([this, id, seen = generation_.load()] { serve(id, seen); });
      }
      task_ = &task;
      wanted_ = threads;
      remaining_.store(threads - 1, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      if (sleepers_ > 0) wake_.notify_all();  // under the lock: a worker about to park sees the new generation
    }
    task(0);
    if (!spin_until([&] { return remaining_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(m_);
      done_.wait(lock, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
    }
    return true;
  }

 private:
  // True once done() holds, false after kSpin without it.
  template <class Done>
  static bool spin_until(Done done) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
      if (done()) return true;
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
      cpu_relax();
    }
  }

  // Thread `id` (1..) takes part in each job that wants more than id threads.
  void serve(int id, uint64_t seen) {
    for (;;) {
      const std::function<void(int)>* task = nullptr;
      {
        const bool moved = spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
        std::unique_lock<std::mutex> lock(m_);
        if (!moved) {
          ++sleepers_;
          wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
          --sleepers_;
        }
        if (stop_) return;
        seen = generation_.load(std::memory_order_relaxed);
        if (id < wanted_) task = task_;
      }
      if (!task) continue;
      (*task)(id);  // run_workers' task catches what the work throws
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(m_);  // the caller checks under it before it waits
        done_.notify_one();
      }
    }
  }

  std::mutex busy_;  // held by the one caller whose job the pool runs
  std::mutex m_;     // guards task_, wanted_, sleepers_, stop_ and each change of generation_
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  int wanted_ = 0, sleepers_ = 0;
  bool stop_ = false;
  std::atomic<uint64_t> generation_{0};  // one more per job: what a spinning worker watches
  std::atomic<int> remaining_{0};        // workers of the current job still running
};

}  // namespace

bool run_on_pool(int threads, const std::function<void(int)>& task) {
  static Pool pool;
  return pool.run(threads, task);
}

}  // namespace detail
}  // namespace attnsim
