// http.h on libcurl (the easy interface: one transfer at a time, files fetched in order).
#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>

#include "engine/error.h"
#include "http.h"

namespace attnsim::hub {

namespace {

// The bodies of error pages are dropped, up to this much: an endless one is refused instead
// of read forever. (Endless headers libcurl refuses itself, past 300 KB: "Too large response
// headers", a CURLE_RECV_ERROR.)
constexpr size_t kMaxDroppedBytes = 1 << 20;

using Clock = std::chrono::steady_clock;

struct Transfer {
  Transfer(const Sink* s, const Tick* k, const std::atomic<bool>* c, int64_t timeout)
      : sink(s), tick(k), cancel(c), timeout_s(timeout) {}
  const Sink* sink;
  const Tick* tick;
  const std::atomic<bool>* cancel;
  int64_t timeout_s;
  Clock::time_point start = Clock::now();
  HttpResponse response;
  int answers = 0;
  size_t dropped_bytes = 0;
  int64_t received = 0;      // body bytes of every answer, error pages included
  double last_data = 0;      // seconds from start to the last of them
  bool too_slow = false;     // past the deadline (http.h)
  std::string refusal;       // why the transfer was stopped here (not by the sink)
  std::exception_ptr thrown; // by the sink or the tick: no exception may cross libcurl's C frames,
                             // so it is kept and rethrown once curl_easy_perform returns
};

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// One header line: "HTTP/1.1 302 Found" starts an answer; "Name: value" adds to it.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    ++t->answers;
    const size_t sp = line.find(' ');
    t->response.status = sp == std::string::npos ? 0 : std::strtol(line.c_str() + sp + 1, nullptr, 10);
    t->response.last.clear();
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon != std::string::npos && colon > 0) {
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string value = trimmed(line.substr(colon + 1));
    t->response.last[name] = value;
    if (t->answers == 1) t->response.first[name] = value;
  }
  return size * count;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// http.h's deadline: timeout_s, plus a second for each kMinBytesPerSecond bytes received.
// Not while the server is silent: after timeout_s of that, curl's stall guard ends the transfer
// as a stall ("no data for N s"), which says more than a missed deadline would.
bool past_deadline(Transfer& t) {
  const double now = seconds_since(t.start);
  const double allowed = static_cast<double>(t.timeout_s) + static_cast<double>(t.received) / kMinBytesPerSecond;
  t.too_slow = t.too_slow || (now - t.last_data < static_cast<double>(t.timeout_s) && now > allowed);
  return t.too_slow;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  t->received += static_cast<int64_t>(n);
  t->last_data = seconds_since(t->start);
  if (past_deadline(*t)) return 0;
  if (t->response.status < 200 || t->response.status > 299) {  // an error page: dropped
    t->dropped_bytes += n;
    if (t->dropped_bytes <= kMaxDroppedBytes) return n;
    t->refusal = "the server sent over 1 MiB of an HTTP " + std::to_string(t->response.status) + " page";
    return 0;
  }
  try {
    return (*t->sink)(t->response, data, n) ? n : 0;  // 0: CURLE_WRITE_ERROR
  } catch (...) {
    t->thrown = std::current_exception();
    return 0;
  }
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->cancel && t->cancel->load()) return 1;  // CURLE_ABORTED_BY_CALLBACK
  if (past_deadline(*t)) return 1;               // curl calls this about once a second, data or not
  try {
    if (*t->tick) (*t->tick)();
  } catch (...) {
    t->thrown = std::current_exception();
    return 1;
  }
  return 0;
}

Outcome outcome_of(CURLcode code) {
  switch (code) {
    case CURLE_OK: return Outcome::Done;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT: return Outcome::Unreachable;
    case CURLE_OPERATION_TIMEDOUT: return Outcome::Stalled;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING: return Outcome::Cut;
    case CURLE_ABORTED_BY_CALLBACK: return Outcome::Cancelled;
    case CURLE_WRITE_ERROR: return Outcome::SinkStopped;
    default: return Outcome::Failed;
  }
}

struct Easy {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  ~Easy() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
  }
};

}  // namespace

HttpResult http_get(const HttpRequest& req, const Sink& sink, const Tick& tick) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  Easy e;
  if (!e.h) throw Error("libcurl could not start a transfer");
  Transfer t(&sink, &tick, req.cancel, req.timeout_s);
  char error[CURL_ERROR_SIZE] = "";
  std::string auth;
  if (!req.token.empty()) {
    auth = "Authorization: Bearer " + req.token;
    e.headers = curl_slist_append(e.headers, auth.c_str());
  }
  const std::string range = std::to_string(req.offset) + "-";
  CURL* h = e.h;
  curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "attnsim/" ATTNSIM_VERSION " (libcurl)");
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, static_cast<long>(req.timeout_s));
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(req.timeout_s));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L * 1024);  // fewer, larger writes into the .incomplete
  if (e.headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, e.headers);
  if (req.offset > 0) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  const CURLcode code = curl_easy_perform(h);
  if (t.thrown) std::rethrow_exception(t.thrown);
  HttpResult r;
  r.outcome = t.too_slow ? Outcome::TooSlow : t.refusal.empty() ? outcome_of(code) : Outcome::Failed;
  r.response = std::move(t.response);
  r.detail = !t.refusal.empty() ? t.refusal : error[0] ? error : curl_easy_strerror(code);
  if (t.too_slow) {
    char b[96];
    std::snprintf(b, sizeof b, "%lld bytes in %.1f s", static_cast<long long>(t.received), seconds_since(t.start));
    r.detail = b;
  }
  return r;
}

}  // namespace attnsim::hub
