// Each step of the pass shown by a display name in the UI language, with its stable step name
// (the .npy file, the lessons' and tests' name) shown beside it in small type:
//
//   tok_embed            token embedding           토큰 임베딩
//   embed                embedding                 임베딩           (the lens's first stage)
//   layer_0              block 0                   블록 0           (the stream after block 0)
//   layer_0/mlp          block 0 · MLP             블록 0 · MLP     (attribution's direct path)
//   layer_0/head_1       head 0.1                  헤드 0.1
//   layer_0/mlp_act      block 0 · MLP activation  블록 0 · MLP 활성화
//   alpha                attention weights         어텐션 가중치
//
// Blocks are numbered from 0 like everything else on screen (the head grid's rows "L0", head
// 2.1 = block 2's head 1, layer_2 on disk), so a block has one number wherever it appears.
// Covers model/whole_pass.h's steps (kEmbedSteps, kBlockSteps, kHeadSteps), the engine's
// attention steps (engine/trace.h kStepNames), the lens's stages and the direct logit
// attribution's parts (model/lens.h). A name it does not know is returned as it is.
#pragma once

#include <string>

#include "views/i18n.h"

namespace attnsim::app {

std::string step_display_name(const std::string& step, Lang lang);
// True when step_display_name knows the name (its words differ from the name itself).
bool has_step_display_name(const std::string& step);

}  // namespace attnsim::app
