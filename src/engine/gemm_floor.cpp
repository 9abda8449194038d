#include "gemm_floor.h"

namespace attnsim {

namespace {
thread_local GemmLog* active_log = nullptr;
}

GemmLog::GemmLog() { active_log = this; }
GemmLog::~GemmLog() { active_log = nullptr; }

void GemmLog::note(const GemmShape& s) {
  if (active_log != nullptr) active_log->calls.push_back(s);
}

void run_forward_gemms(const MhaConfig& c, const MhaWeights& w, const ForwardResult& pass, Backend& be) {
  const Trace& t = pass.trace;
  (void)be.linear(t.at("query").out, w.W_Q);
  (void)be.linear(t.at("key").out, w.W_K);
  (void)be.linear(t.at("value").out, w.W_V);
  (void)be.qk(t.at("q_heads").out, t.at("k_heads").out);
  const Step& dropped = t.at("alpha_dropped");
  (void)be.av(dropped.skipped() ? t.at("alpha").out : dropped.out, t.at("v_heads").out);
  if (!c.wo_identity) (void)be.linear(t.at("ctx_concat").out, w.W_O);
}

double forward_gemm_flops(const MhaConfig& c) {
  const double B = c.batch, Tq = c.tq, Tk = c.tk, d = c.d_model;
  const double projections = 2 * B * Tq * d * d + 2 * 2 * B * Tk * d * d + (c.wo_identity ? 0 : 2 * B * Tq * d * d);
  const double attention = 2 * 2 * B * Tq * Tk * d;  // q·kᵀ and alpha·v over all heads
  return projections + attention;
}

}  // namespace attnsim
