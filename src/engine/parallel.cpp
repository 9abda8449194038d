// The engine's parked threads (parallel.h): started on first use, grown to the widest job
// asked for, woken per job through one condition variable, joined at exit.
#include "parallel.h"

#include <condition_variable>

namespace attnsim {

int default_threads() {
  static const int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return n;
}

namespace detail {

namespace {

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
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
        threads_.emplace_back([this, id] { serve(id); });
      }
      task_ = &task;
      wanted_ = threads;
      remaining_ = threads - 1;
      ++generation_;
    }
    wake_.notify_all();
    task(0);
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [&] { return remaining_ == 0; });
    task_ = nullptr;
    return true;
  }

 private:
  // Thread `id` (1..) takes part in each job that wants more than id threads.
  void serve(int id) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* task;
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && id < wanted_); });
        if (stop_) return;
        seen = generation_;
        task = task_;
      }
      (*task)(id);  // run_workers' task catches what the work throws
      std::lock_guard<std::mutex> lock(m_);
      if (--remaining_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;  // held by the one caller whose job the pool runs
  std::mutex m_;     // guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  int wanted_ = 0, remaining_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace

bool run_on_pool(int threads, const std::function<void(int)>& task) {
  static Pool pool;
  return pool.run(threads, task);
}

}  // namespace detail
}  // namespace attnsim
