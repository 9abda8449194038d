// The heat view spec of one trace step: its display, and while the playback is moving into
// it, the transition from the step it reads (its first input). Shared by the tensor panel
// and the bug lab, so both animate and label steps the same way.
#pragma once

#include "app/app.h"
#include "app/heat_view.h"

namespace attnsim::app {

// run: 0 = the run, 1 = the reference run. animate: use the playback's transition.
HeatViewSpec step_view_spec(App& app, int run, const Step& step, bool animate);

// Tokens that label the rows of a step (keys for k_*/v_* steps, queries otherwise).
const std::vector<std::string>* row_tokens(const App& app, const std::string& step);

}  // namespace attnsim::app
