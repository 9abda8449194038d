// Shared by the engine tests: one comparison helper and a way to run attnsim-cli.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "engine/mha.h"
#include "engine/tensor.h"

namespace attnsim::test {

// A config of the given sizes: self-attention when Tq == Tk, cross-attention otherwise.
inline MhaConfig sized_config(int64_t B, int64_t Tq, int64_t Tk, int64_t d, int64_t h,
                              const std::string& mask = "none") {
  MhaConfig c;
  c.batch = B;
  c.tq = Tq;
  c.tk = Tk;
  c.d_model = d;
  c.heads = h;
  c.self_attention = Tq == Tk;
  c.mask = parse_mask_spec(mask);
  return c;
}

// Largest |a - b| over all elements; NaN at the same place in both counts as equal, NaN in
// only one of them (or different infinities) makes the result infinite.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  const auto va = a.to_vector(), vb = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::isnan(va[i]) || std::isnan(vb[i])) {
      if (std::isnan(va[i]) != std::isnan(vb[i])) return INFINITY;
      continue;
    }
    if (std::isinf(va[i]) || std::isinf(vb[i])) {
      if (va[i] != vb[i]) return INFINITY;
      continue;
    }
    worst = std::fmax(worst, std::fabs(static_cast<double>(va[i]) - vb[i]));
  }
  return worst;
}

#ifdef ATTNSIM_CLI
struct CliResult {
  int code;
  std::string output;  // stdout and stderr together
};

// env: "NAME=value ..." put before the command, or "env -u NAME" to run without a variable.
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + (env.empty() ? "" : " ") + ATTNSIM_CLI + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  CliResult r{-1, ""};
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
#endif  // ATTNSIM_CLI

}  // namespace attnsim::test
