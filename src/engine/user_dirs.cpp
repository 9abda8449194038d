// The XDG base directories. See user_dirs.h.
#include "engine/user_dirs.h"

#include <cstdlib>
#include <filesystem>

namespace attnsim {

std::string user_dir(UserDir which) {
  namespace fs = std::filesystem;
  const char* env = which == UserDir::Config ? "XDG_CONFIG_HOME" : which == UserDir::Data ? "XDG_DATA_HOME" : "XDG_CACHE_HOME";
  const char* under_home = which == UserDir::Config ? ".config" : which == UserDir::Data ? ".local/share" : ".cache";
  const char* xdg = std::getenv(env);
  fs::path base;
  if (xdg && *xdg && fs::path(xdg).is_absolute()) {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = fs::path(home && *home ? home : "/tmp") / under_home;
  }
  return (base / "attnsim").string();
}

}  // namespace attnsim
