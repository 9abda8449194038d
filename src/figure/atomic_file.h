// Files appear whole or not at all: every sink writes a temporary file beside the target
// (same folder, so rename is atomic), checks every write and the close, then renames it
// into place. On failure the temporary file is removed and `error` says why in one line.
// (Issue 14 brings a helper of the same kind to src/engine; the sinks switch to it once it
// has landed.)
#pragma once

#include <functional>
#include <string>

namespace attnsim::figure {

// `writer` fills the file at the path it is given and returns false with `error` on failure.
bool write_atomically(const std::string& path,
                      const std::function<bool(const std::string& tmp, std::string* error)>& writer,
                      std::string* error);
bool write_text_atomically(const std::string& path, const std::string& content, std::string* error);

}  // namespace attnsim::figure
