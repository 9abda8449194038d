// A model's name on the Hub: ORG/NAME[@REVISION], e.g. "openai-community/gpt2",
// "Qwen/Qwen2-0.5B@main", "org/model@refs/pr/1", "org/model@<40-hex commit>".
// The rules are huggingface_hub's validate_repo_id ([A-Za-z0-9._-], at most 96 characters a
// part, no "--" or "..", no '.' or '-' at either end), so a name never walks out of the cache
// (models--ORG--NAME) or into another URL path. A revision may hold '/' (refs/pr/1) but no
// "..", no empty part and nothing outside [A-Za-z0-9._/-].
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace attnsim::hub {

struct RepoRef {
  std::string repo;      // "ORG/NAME"
  std::string revision;  // "main" when not given
};

// nullopt when `text` does not have the shape of a name (a path like "./x", "/abs", "a/b/c",
// "x"): the caller treats it as a folder. A name whose revision breaks the rules is an Error
// that says which rule.
std::optional<RepoRef> parse_repo_ref(std::string_view text);

// "ORG/NAME" or "ORG/NAME@REV" when REV is not main, for messages.
std::string display_name(const RepoRef& ref);

}  // namespace attnsim::hub
