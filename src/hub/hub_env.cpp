#include "hub_env.h"

#include <cstdlib>
#include <string_view>

#include "engine/checked.h"
#include "engine/error.h"
#include "url_text.h"

namespace attnsim::hub {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string without_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// huggingface_hub's _is_true: "1", "ON", "YES", "TRUE" in any case.
bool is_true(std::string v) {
  for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

}  // namespace

void check_token(const std::string& token, const std::string& what) {
  // a CR or LF would end the Authorization header and start another one
  for (const char c : token)
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f)
      throw Error(what + " holds a space or control character: give the access token alone");
}

HubEnv hub_env() {
  HubEnv e;
  if (const std::string cache = env("HF_HUB_CACHE"); !cache.empty()) {
    e.cache = without_trailing_slashes(cache);
  } else if (const std::string home = env("HF_HOME"); !home.empty()) {
    e.cache = without_trailing_slashes(home) + "/hub";
  } else if (const std::string user = env("HOME"); !user.empty()) {
    e.cache = without_trailing_slashes(user) + "/.cache/huggingface/hub";
  } else {
    throw Error("no Hugging Face cache folder: set HF_HUB_CACHE (or HF_HOME, or HOME)");
  }
  e.endpoint = without_trailing_slashes(env("HF_ENDPOINT"));
  if (e.endpoint.empty()) e.endpoint = "https://huggingface.co";
  if (e.endpoint.rfind("https://", 0) != 0 && e.endpoint.rfind("http://", 0) != 0) {
    // a password before an '@' is hidden, whether or not the value has a scheme for
    // without_credentials to find
    const size_t at = e.endpoint.find("://") == std::string::npos ? e.endpoint.rfind('@') : std::string::npos;
    const std::string shown = at == std::string::npos ? without_credentials(e.endpoint) : "***" + e.endpoint.substr(at);
    throw Error("HF_ENDPOINT '" + one_line(shown) + "' is not an http:// or https:// address");
  }
  e.token = env("HF_TOKEN");
  check_token(e.token, "HF_TOKEN");
  e.offline = is_true(env("HF_HUB_OFFLINE"));
  if (const std::string t = env("ATTNSIM_HUB_TIMEOUT"); !t.empty())
    e.timeout_s = parse_int(t, "ATTNSIM_HUB_TIMEOUT (seconds)", 1, 3600);
  return e;
}

}  // namespace attnsim::hub
