// Every environment variable the hub honours, read in this one place (as huggingface_hub's
// constants.py does), so the CLI, the app and the tests agree on them:
//   HF_HUB_CACHE         the cache folder; else HF_HOME/hub; else $HOME/.cache/huggingface/hub
//   HF_ENDPOINT          the Hub's address (default https://huggingface.co); the tests point it
//                        at the mock hub on 127.0.0.1
//   HF_TOKEN             an access token for gated and private models, sent as
//                        "Authorization: Bearer ..." and never printed, logged or written
//   HF_HUB_OFFLINE       1 / ON / YES / TRUE (any case): never touch the network
//   ATTNSIM_HUB_TIMEOUT  seconds to connect, and seconds without a byte before a download
//                        gives up (1 to 3600, default 30)
#pragma once

#include <cstdint>
#include <string>

namespace attnsim::hub {

struct HubEnv {
  std::string cache;     // no trailing '/'
  std::string endpoint;  // "https://huggingface.co", no trailing '/'
  std::string token;     // empty: none
  bool offline = false;
  int64_t timeout_s = 30;
};

// Throws Error for a value that cannot be used (a token with a control character, an
// endpoint that is not http(s)://, a timeout that is not a whole number of seconds, no HOME
// for the default cache). A message never contains the token.
HubEnv hub_env();
// Refuses a token that could not be sent as one header value; `what` names where it came from.
void check_token(const std::string& token, const std::string& what);

}  // namespace attnsim::hub
