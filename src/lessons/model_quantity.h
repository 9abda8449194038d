// model.* quantities: figures of a shipped trained checkpoint (assets/models/<name>), so a
// lesson on the trained model states role scores, accuracies and losses the checker
// recomputes. The field list and what each means are in quantity.h.
#pragma once

#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/quantity.h"

namespace attnsim::model {
struct Model;
}

namespace attnsim::lessons {

extern const std::vector<std::string> kModelFields;

// Evaluates model.<field> under the claim's `model` table. Checkpoints, role tables and
// evaluations are cached per folder for the life of the process (lesson loads stay fast).
// Throws Error: an unknown checkpoint or step (listing the ones that exist), a per-head field
// without layer/head, a head outside the model, a bad `ablate` list.
Value model_field(const ModelSettings& settings, const std::string& field);

// The checkpoint folder a `model` table names (checkpoint and step; the shipped induction
// model by default), and that folder's model, loaded once per process (decode.* on a trained
// decode scenario runs it). Throw Error like model_field.
std::string model_dir_of(const ModelSettings& settings);
const model::Model& loaded_model(const std::string& dir);

// A file that keeps model.* values across runs (the app: opening the lesson library
// evaluates every lesson's model claims, seconds of forward passes). Keyed by the folder
// (relative to the shipped models when it is one of them), the content of its model.json and
// of every run a claim over runs reads, the field and the table; "" (the default) turns it
// off, so `lesson check` always recomputes. `lesson check --value-cache FILE` writes one from
// scratch, which tools/web.sh puts in the page. The file is written through a temporary and
// a rename; an unreadable or broken one is ignored.
void use_model_value_cache(const std::string& file);
// $XDG_CACHE_HOME/attnsim/model-values.json, or ~/.cache/... (engine/user_dirs.h).
std::string default_model_value_cache();

// The checkpoint folder a step on the trained model shows: that of its first model.* or
// decode.* claim (checkpoint and step; decode.* reads it on a trained decode scenario), the
// shipped induction model when it has none. Throws Error like
// model_field for a checkpoint or step that does not exist.
std::string step_model_dir(const LessonStep& step);
// Every checkpoint folder its model.* (and decode.*) claims read, except claims over runs, in
// the order they first appear (the shipped
// induction model when it has none): a step comparing models names several.
std::vector<std::string> step_model_dirs(const LessonStep& step);

}  // namespace attnsim::lessons
