// Tasks on threads (desktop) or on the main loop (web). See tasks.h.
#include "views/tasks.h"

#include <deque>

namespace attnsim::app {

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)  // see tasks.h
namespace detail {

namespace {
std::deque<std::function<bool()>>& queue() {
  static std::deque<std::function<bool()>> q;
  return q;
}
}  // namespace

void queue_on_main_loop(std::function<bool()> step) { queue().push_back(std::move(step)); }

void run_queue(bool one_pass_only, double budget_ms) {
  const auto start = std::chrono::steady_clock::now();
  auto spent = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(); };
  // Round robin: every entry gets a call per pass, so a long slice never starves a task.
  do {
    const size_t n = queue().size();
    for (size_t i = 0; i < n && !queue().empty(); ++i) {
      auto step = std::move(queue().front());
      queue().pop_front();
      if (step()) queue().push_back(std::move(step));
    }
  } while (!one_pass_only && !queue().empty() && spent() < budget_ms);
}

}  // namespace detail

Task<void> start_sliced(std::function<bool()> step, std::function<void()>) {  // no thread to set up
  auto state = std::make_shared<TaskState<void>>();
  detail::queue_on_main_loop([s = state, step = std::move(step)] {
    bool more = false;
    try {
      more = step();
    } catch (...) {
      s->error = std::current_exception();
    }
    s->done = !more;
    return more;
  });
  return Task<void>(std::move(state));
}

void run_pending_tasks(double budget_ms) { detail::run_queue(false, budget_ms); }
#else
Task<void> start_sliced(std::function<bool()> step, std::function<void()> on_thread) {
  return std::async(std::launch::async, [step = std::move(step), on_thread = std::move(on_thread)] {
    if (on_thread) on_thread();
    while (step()) {
    }
  });
}

void run_pending_tasks(double) {}
#endif

}  // namespace attnsim::app
