// Where attnsim keeps its own files, by the XDG Base Directory spec (freedesktop.org):
//   Config  $XDG_CONFIG_HOME, else ~/.config       window.json        (views/window_settings.h)
//   Data    $XDG_DATA_HOME, else ~/.local/share    progress.json      (lessons/progress.h)
//   Cache   $XDG_CACHE_HOME, else ~/.cache         model-values.json  (lessons/model_quantity.h)
// each with "attnsim" appended. A relative $XDG_* is ignored, as the spec says; with no HOME
// either, /tmp stands in for it. Nothing is created here: each writer makes its folder.
#pragma once

#include <string>

namespace attnsim {

enum class UserDir { Config, Data, Cache };

std::string user_dir(UserDir which);

}  // namespace attnsim
