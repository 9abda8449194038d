// One line for each way a request to the Hub fails, worded for the user: what to do next.
//   cannot reach ENDPOINT            the network (or HF_HUB_OFFLINE=1 to use the cache only)
//   HTTP 401 / 403                   gated or private: how to pass a token (HF_TOKEN)
//   HTTP 404                         the name or the revision is wrong
//   HTTP 5xx                         the Hub's trouble: try again later
//   no data for N s                  a stall (ATTNSIM_HUB_TIMEOUT); run again to resume
//   N bytes in S s, slower than ...  past the request's deadline (http.h); run again to resume
//   cancelled
// The Hub's address and curl's words are printed without credentials (url_text.h).
// A cut connection and a refused body are the caller's to word (blob_download.cpp): only it
// knows how many bytes it kept.
#pragma once

#include <string>

#include "http.h"

namespace attnsim::hub {

inline constexpr const char* kModelInfo = "the model info";  // RequestContext::what of the first request

struct RequestContext {
  std::string model;     // "ORG/NAME" or "ORG/NAME@REV"
  std::string what;      // "the model info", "config.json"
  std::string endpoint;  // HF_ENDPOINT's value
  int64_t timeout_s = 30;
  bool token = false;    // whether HF_TOKEN was sent (never its value)
};

// Throws the Error for a result that is not Outcome::Done with a 2xx status; returns otherwise.
void check_response(const HttpResult& result, const RequestContext& context);
// The Error for an answer with HTTP status `status` (not 2xx): the page's fetch words its
// answers with it too (hub_download_web.cpp).
[[noreturn]] void status_error(long status, const RequestContext& context);

}  // namespace attnsim::hub
