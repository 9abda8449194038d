// WholeRun: what the model views show of the whole pass (model/whole_pass.h) on the sequence
// on screen, kept small: the pass's steps are dropped once these are read off them.
//
//   last_logits   the logits step's last row                          (1,1,V)  what sampling reads
//   lens          the logit lens at the last position (model/lens.h), its target the model's
//                 own top token
//   dla           direct logit attribution of `dla_token` at the last position (the model's
//                 top token unless the learner picked one), parts as lens.h names them
//   stream_norm   ‖x‖ of the residual stream per stage and position: stage 0 is embed, stage
//                 1 + l is block l's output (block_output)           [1 + L][T]
//   head_maps     each head's attention weights (alpha) on the sequence, per block: T x T,
//                 averaged into kMapCells x kMapCells blocks past that (the overview's small
//                 maps; a long text keeps KiB, not GB)               [L][H][n*n], n = map_size
//   model_steps,  the steps that ran (skipped ones left out), in order, with their shapes:
//   block_steps   the model's, and block 0's (every block has the same; the overview lists them)
//
// No OpenGL: tested without a window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "model/pass/lens.h"
#include "model/pass/whole_pass.h"

namespace attnsim::app {

// A step that ran and its output's shape.
struct StepShape {
  std::string name;
  std::vector<int64_t> shape;
};

inline constexpr int64_t kMapCells = 48;

struct WholeRun {
  std::vector<int32_t> tokens;
  Tensor last_logits;                          // (1,1,V)
  model::LogitLens lens;
  model::LogitAttribution dla;
  std::vector<std::vector<double>> stream_norm;  // [stage][position]
  std::vector<std::vector<std::vector<float>>> head_maps;  // [block][head][row * map_size + col]
  int64_t map_size = 0;
  std::vector<StepShape> model_steps, block_steps;
  double ms = 0;                               // the pass and the readings

  int64_t layers() const { return static_cast<int64_t>(stream_norm.size()) - 1; }
  double max_stream_norm() const;
  bool ran(const std::string& step) const;  // a model or block step that is not skipped
};

// The whole pass of `tokens` and its readings. dla_token -1: the model's top token at the last
// position. Throws Error as whole_forward and attribute_logit do (a bad token, a token outside
// the vocabulary).
WholeRun whole_run(const model::PassModel& model, const std::vector<int32_t>& tokens, int32_t dla_token = -1);

// One head's direct contribution in `dla` ("layer_L/head_H"), 0 when it is not listed.
double head_part(const model::LogitAttribution& dla, int64_t layer, int64_t head);
// The parts that are no head's (tok_embed, pos_embed, each layer's attn_bias and mlp, bias),
// in dla's order: the direct paths the grid lists beside the heads.
std::vector<model::LogitPart> direct_parts(const model::LogitAttribution& dla);

}  // namespace attnsim::app
