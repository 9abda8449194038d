#include "hub_errors.h"

#include "engine/error.h"
#include "url_text.h"

namespace attnsim::hub {

[[noreturn]] void status_error(long status, const RequestContext& c) {
  const std::string code = "HTTP " + std::to_string(status);
  if (status == 401 || status == 403) {
    if (c.token)
      throw Error(c.model + ": the Hub refused the token for " + c.what + " (" + code +
                  "): use a token with read access, after accepting the model's terms on its Hub page");
    throw Error(c.model + ": the Hub refused " + c.what + " without a token (" + code +
                "): the model is gated or private (or the name is wrong); accept its terms on its Hub page, "
                "then set HF_TOKEN (or the app's Token field) to an access token (huggingface.co/settings/tokens)");
  }
  if (status == 404 && c.what == kModelInfo)
    throw Error(c.model + ": no such model or revision on the Hub (" + code +
                "): check the name (ORG/NAME, e.g. openai-community/gpt2) and the revision after '@'");
  if (status == 404) throw Error(c.model + ": " + c.what + " not found on the Hub (" + code + ")");
  if (status >= 500)
    throw Error(c.model + ": the Hub answered " + code + " for " + c.what + " (a server error): try again later");
  throw Error(c.model + ": the Hub answered " + code + " for " + c.what);
}

void check_response(const HttpResult& r, const RequestContext& c) {
  const std::string endpoint = without_credentials(c.endpoint), detail = one_line(without_credentials(r.detail));
  switch (r.outcome) {
    case Outcome::Done:
      if (r.response.status >= 200 && r.response.status <= 299) return;
      status_error(r.response.status, c);
    case Outcome::Unreachable:
      throw Error(c.model + ": cannot reach " + endpoint + " (" + detail +
                  "): check the network, or set HF_HUB_OFFLINE=1 to open only what the cache holds");
    case Outcome::Stalled:
      throw Error(c.model + ": " + c.what + ": no data from " + endpoint + " for " + std::to_string(c.timeout_s) +
                  " s (ATTNSIM_HUB_TIMEOUT); ask for the model again to resume");
    case Outcome::TooSlow:
      throw Error(c.model + ": " + c.what + ": " + endpoint + " sent " + detail + ", slower than " +
                  std::to_string(kMinBytesPerSecond >> 10) + " KiB/s after the first " + std::to_string(c.timeout_s) +
                  " s (ATTNSIM_HUB_TIMEOUT); ask for the model again to resume");
    case Outcome::Cancelled:
      throw Error(c.model + ": download cancelled during " + c.what + "; ask for the model again to resume");
    case Outcome::Cut:
      throw Error(c.model + ": " + c.what + ": the connection to " + endpoint + " was cut (" + detail +
                  "); ask for the model again");
    case Outcome::SinkStopped:
    case Outcome::Failed:
      break;
  }
  throw Error(c.model + ": " + c.what + ": " + detail);
}

}  // namespace attnsim::hub
