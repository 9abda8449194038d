#include "repo_name.h"

#include "engine/error.h"

namespace attnsim::hub {

namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// One part of ORG/NAME.
bool valid_part(std::string_view p) {
  if (p.empty() || p.size() > 96) return false;
  for (const char c : p)
    if (!name_char(c)) return false;
  const auto edge = [](char c) { return c == '.' || c == '-'; };
  return !edge(p.front()) && !edge(p.back()) && p.find("--") == std::string_view::npos &&
         p.find("..") == std::string_view::npos;
}

void check_revision(std::string_view rev, std::string_view text) {
  const auto bad = [&](const std::string& why) {
    throw Error("'" + one_line(text) + "': the revision after '@' " + why +
                " (a branch, tag or commit: letters, digits, . _ - and /)");
  };
  if (rev.empty() || rev.size() > 255) bad("must hold 1 to 255 characters");
  for (const char c : rev)
    if (!name_char(c) && c != '/') bad("holds '" + one_line(std::string(1, c)) + "'");
  if (rev.front() == '/' || rev.back() == '/' || rev.find("//") != std::string_view::npos) bad("has an empty part");
  if (rev.front() == '.' || rev.front() == '-' || rev.find("..") != std::string_view::npos ||
      rev.find("/.") != std::string_view::npos)
    bad("has a part starting with '.' or '-', or \"..\"");
}

}  // namespace

std::optional<RepoRef> parse_repo_ref(std::string_view text) {
  const size_t at = text.find('@');
  const std::string_view repo = text.substr(0, at);
  const size_t slash = repo.find('/');
  if (slash == std::string_view::npos || !valid_part(repo.substr(0, slash)) || !valid_part(repo.substr(slash + 1)))
    return std::nullopt;
  RepoRef ref{std::string(repo), "main"};
  if (at != std::string_view::npos) {
    check_revision(text.substr(at + 1), text);
    ref.revision = std::string(text.substr(at + 1));
  }
  return ref;
}

std::string display_name(const RepoRef& ref) { return ref.revision == "main" ? ref.repo : ref.repo + "@" + ref.revision; }

}  // namespace attnsim::hub
