// URLs in messages without their credentials. HF_ENDPOINT may carry a user and password
// (http://user:PASSWORD@host/), and every message that names the Hub, or quotes curl's words
// about it, goes through without_credentials, so no password reaches a terminal, a log or the
// app's banner.
#pragma once

#include <string>
#include <string_view>

namespace attnsim::hub {

// `text` with the userinfo of every URL in it ("scheme://USER:PASS@") written as "***@". A
// password may hold any character but whitespace ('/' and ')' included), so the userinfo is
// taken to run to the last '@' before the next whitespace: a path holding '@' is hidden too,
// never a password shown.
std::string without_credentials(std::string_view text);

}  // namespace attnsim::hub
