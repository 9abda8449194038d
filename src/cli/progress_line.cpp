#include "progress_line.h"

#include <unistd.h>

#include <cstdio>

#include "engine/cost.h"

namespace attnsim::cli {

std::string format_progress(const hub::Progress& p) {
  std::string line = p.file + "  " + human_bytes(p.done) + " / " + human_bytes(p.total);
  if (p.total > 0) line += " (" + std::to_string(static_cast<int>(100.0 * p.done / p.total)) + "%)";
  const double rate = p.seconds > 0 ? p.fetched / p.seconds : 0;
  std::string eta = "--:--";
  if (rate > 0) {
    const long long s = static_cast<long long>((p.total - p.done) / rate + 0.5);
    char buf[32];
    if (s >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
    eta = buf;
  }
  return line + "  " + human_bytes(static_cast<int64_t>(rate)) + "/s  ETA " + eta;
}

ProgressLine::ProgressLine() : tty_(::isatty(STDERR_FILENO) == 1) {}

void ProgressLine::update(const hub::Progress& p) {
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < std::chrono::milliseconds(200) && p.done < p.total) return;
  last_ = now;
  const std::string line = format_progress(p);
  std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(width_ > line.size() ? width_ - line.size() : 0), "");
  std::fflush(stderr);
  width_ = line.size();
  shown_ = true;
}

void ProgressLine::end() {
  if (shown_) std::fprintf(stderr, "\n");
  shown_ = false;
}

}  // namespace attnsim::cli
