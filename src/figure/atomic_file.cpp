// Temporary file + rename. See atomic_file.h.
#include "figure/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace attnsim::figure {

bool write_atomically(const std::string& path,
                      const std::function<bool(const std::string& tmp, std::string* error)>& writer,
                      std::string* error) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::string why;
  bool ok = writer(tmp, &why);
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    why = std::string("cannot rename the finished file into place: ") + std::strerror(errno);
    ok = false;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    if (error) *error = path + ": " + why;
  }
  return ok;
}

bool write_text_atomically(const std::string& path, const std::string& content, std::string* error) {
  return write_atomically(
      path,
      [&](const std::string& tmp, std::string* why) {
        std::FILE* f = std::fopen(tmp.c_str(), "wb");
        if (!f) {
          *why = std::string("cannot write: ") + std::strerror(errno);
          return false;
        }
        const bool wrote = std::fwrite(content.data(), 1, content.size(), f) == content.size();
        const int write_errno = errno;
        if (std::fclose(f) != 0 || !wrote) {
          *why = std::string("write failed: ") + std::strerror(wrote ? errno : write_errno);
          return false;
        }
        return true;
      },
      error);
}

}  // namespace attnsim::figure
