// engine/user_dirs.h: the XDG base directories, an absolute $XDG_* first, a relative one
// ignored (as the spec says), then $HOME, then /tmp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

#include "engine/user_dirs.h"

using namespace attnsim;

namespace {

// Sets (or, for nullopt, unsets) a variable for one scope; restores it after.
class EnvVar {
 public:
  EnvVar(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~EnvVar() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("user_dir: XDG first when absolute, else HOME's default folder, else /tmp", "[engine]") {
  EnvVar home("HOME", std::string("/home/ann"));
  {
    EnvVar config("XDG_CONFIG_HOME", std::nullopt), data("XDG_DATA_HOME", std::nullopt), cache("XDG_CACHE_HOME", std::nullopt);
    CHECK(user_dir(UserDir::Config) == "/home/ann/.config/attnsim");
    CHECK(user_dir(UserDir::Data) == "/home/ann/.local/share/attnsim");
    CHECK(user_dir(UserDir::Cache) == "/home/ann/.cache/attnsim");
  }
  {
    EnvVar config("XDG_CONFIG_HOME", std::string("/srv/conf")), cache("XDG_CACHE_HOME", std::string("relative/cache"));
    CHECK(user_dir(UserDir::Config) == "/srv/conf/attnsim");
    CHECK(user_dir(UserDir::Cache) == "/home/ann/.cache/attnsim");  // a relative one is ignored
  }
  EnvVar no_home("HOME", std::nullopt), no_data("XDG_DATA_HOME", std::string(""));
  CHECK(user_dir(UserDir::Data) == "/tmp/.local/share/attnsim");
}
