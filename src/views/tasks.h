// Work that must not stop the frames: a recompute, a slide being built, an experiment, a
// training run. The platform decides where it runs:
//   desktop  a thread per task (std::async), as before;
//   web      a page opened from file:// or a plain static host has no cross-origin
//            isolation, so no SharedArrayBuffer and no wasm threads: a task runs on the main
//            loop, between two frames (run_pending_tasks), and a long one slices itself
//            (start_sliced: a step per call, as many as fit in a frame's budget);
//   web with threads (tools/web.sh --threads, for a host that sends the cross-origin
//            isolation headers): threads, as on the desktop.
// Task<T> keeps std::future's calls (valid, wait_for, wait, get), so a caller polls it the
// same way on both.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace attnsim::app {

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
inline constexpr bool kTasksHaveThreads = false;

namespace detail {
// The main loop's queue: each entry is called until it returns false (done).
void queue_on_main_loop(std::function<bool()> step);
void run_queue(bool one_pass_only, double budget_ms);
}  // namespace detail

template <class T>
struct TaskState {
  bool done = false;
  std::exception_ptr error;
  std::conditional_t<std::is_void_v<T>, bool, std::optional<T>> value{};
};

template <class T>
class Task {
 public:
  Task() = default;
  explicit Task(std::shared_ptr<TaskState<T>> s) : state_(std::move(s)) {}
  bool valid() const { return state_ != nullptr; }
  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period>&) const {
    return state_->done ? std::future_status::ready : std::future_status::timeout;
  }
  void wait() const {
    while (!state_->done) detail::run_queue(true, 0);  // a blocking wait runs the queue itself
  }
  T get() {
    wait();
    auto s = std::move(state_);
    if (s->error) std::rethrow_exception(s->error);
    if constexpr (!std::is_void_v<T>) return std::move(*s->value);
  }

 private:
  std::shared_ptr<TaskState<T>> state_;
};

// Runs `fn` on the main loop after the current frame; the result is ready by the next one.
template <class Fn>
auto start_task(Fn fn) -> Task<std::invoke_result_t<Fn>> {
  using T = std::invoke_result_t<Fn>;
  auto state = std::make_shared<TaskState<T>>();
  // Held by pointer: std::function copies, and a job may own move-only things (a promise).
  auto f = std::make_shared<Fn>(std::move(fn));
  detail::queue_on_main_loop([s = state, f] {
    try {
      if constexpr (std::is_void_v<T>) (*f)();
      else s->value.emplace((*f)());
    } catch (...) {
      s->error = std::current_exception();
    }
    s->done = true;
    return false;
  });
  return Task<T>(std::move(state));
}
#else
inline constexpr bool kTasksHaveThreads = true;

template <class T>
using Task = std::future<T>;

template <class Fn>
auto start_task(Fn fn) -> Task<std::invoke_result_t<Fn>> {
  return std::async(std::launch::async, std::move(fn));
}
#endif

// A long job in steps: `step` does one unit of work and returns false when the job is done.
// Desktop: a thread runs `on_thread` (its priority, say) and then the steps back to back.
// Web: the main loop calls `step` between frames, as often as fits in the frame budget.
// Returns a task that is ready when the steps are done.
Task<void> start_sliced(std::function<bool()> step, std::function<void()> on_thread = {});

// Web: runs the queued tasks and slices for up to `budget_ms` (at least one call each);
// call it once per frame, after drawing. Desktop: nothing to do.
void run_pending_tasks(double budget_ms);

}  // namespace attnsim::app
