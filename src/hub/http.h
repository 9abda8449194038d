// GET over HTTP(S) through libcurl, with what the Hub needs and nothing else:
//   - redirects followed (the Hub answers a weight file with 302 to its CDN): http and https
//     only, at most 10;
//   - "Authorization: Bearer TOKEN" when there is a token; curl sends it to the first host
//     only, never to a CDN on another host that a redirect names;
//   - a connect timeout and a stall timeout (less than 1 byte a second for timeout_s);
//   - a deadline that grows with what the answer carries: timeout_s, plus one second for each
//     kMinBytesPerSecond bytes received. A stall guard alone lets a server that drips 2 bytes a
//     second hold a request forever; under this one a model info of a few KB gets about
//     timeout_s, a file of N bytes at most timeout_s + N / kMinBytesPerSecond, and every
//     answer ends, however slowly it comes (Outcome::TooSlow; detail says how much came in how
//     long);
//   - "Range: bytes=OFFSET-" to resume;
//   - the body goes to the sink only for a 2xx answer; the sink may stop the transfer;
//   - a tick about once a second and after data, which also checks the cancel flag;
//   - an exception from the sink or the tick stops the transfer and is rethrown by http_get.
// Nothing is logged: the token appears in no message. Transport failures come back as an
// Outcome, so the caller can word the one line with what it was fetching (hub_errors.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace attnsim::hub {

// The slowest average rate a download may keep (after timeout_s of grace): 128 kbit/s, at
// which GPT-2's weights take nine hours. A slower link is cut, and the next run resumes.
inline constexpr int64_t kMinBytesPerSecond = 16 << 10;

struct HttpRequest {
  std::string url;
  std::string token;   // empty: no Authorization header
  int64_t timeout_s = 30;
  int64_t offset = 0;  // > 0: ask for bytes OFFSET- (Range)
  const std::atomic<bool>* cancel = nullptr;
};

using Headers = std::map<std::string, std::string>;  // lowercase names, values trimmed

struct HttpResponse {
  long status = 0;  // of the last answer (after redirects)
  Headers first;    // the first answer's (the Hub's own, before a redirect to its CDN)
  Headers last;     // the last answer's
};

enum class Outcome { Done, Unreachable, Cut, Stalled, TooSlow, Cancelled, SinkStopped, Failed };

struct HttpResult {
  Outcome outcome = Outcome::Failed;
  HttpResponse response;
  std::string detail;  // curl's words for a failure
};

// false from the sink stops the transfer (Outcome::SinkStopped; the sink keeps its reason).
using Sink = std::function<bool(const HttpResponse&, const char* data, size_t n)>;
using Tick = std::function<void()>;

HttpResult http_get(const HttpRequest& request, const Sink& sink, const Tick& tick = {});

}  // namespace attnsim::hub
