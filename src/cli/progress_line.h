// A download's progress on stderr: one line, rewritten in place ("\r"), at most 5 times a
// second, only when stderr is a terminal (a log or a test reads only the outcome):
//   model.safetensors  12.5 MiB / 523 MiB (2%)  8.31 MiB/s  ETA 1:01
// The line is ended before anything else is printed (an error, the result), also when the
// download throws: ProgressLine ends it when destroyed.
#pragma once

#include <chrono>
#include <string>

#include "hub/hub.h"

namespace attnsim::cli {

// The line's text (no "\r"): rate = bytes received in this run / seconds; the ETA from it,
// "--:--" until a rate is known.
std::string format_progress(const hub::Progress& p);

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine() { end(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const hub::Progress& p);
  void end();  // a newline after the last line shown, once

 private:
  bool tty_;
  bool shown_ = false;
  size_t width_ = 0;  // of the last line, to blank its rest
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace attnsim::cli
