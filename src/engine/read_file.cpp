#include "read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cost.h"
#include "error.h"

namespace attnsim {

RegularFile::RegularFile(std::string path, const std::string& kind) : path_(std::move(path)) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw Error(path_ + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(path_ + ": not a regular file (" + kind + ")");
  }
  size_ = st.st_size;
}

RegularFile::~RegularFile() { ::close(fd_); }

void RegularFile::read_at(int64_t offset, void* p, int64_t n) const {
  char* out = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::pread(fd_, out, static_cast<size_t>(std::min<int64_t>(n, 1 << 30)), offset);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw Error(path_ + ": read failed (" + (r < 0 ? std::strerror(errno) : "file shrank") + ")");
    out += r;
    offset += r;
    n -= r;
  }
}

std::string read_text_file(const std::string& path, int64_t max_bytes) {
  const RegularFile f(path);
  if (f.size() > max_bytes)
    throw Error(path + ": " + human_bytes(f.size()) + " is larger than the " + human_bytes(max_bytes) +
                " a file of this kind may have");
  std::string text(static_cast<size_t>(f.size()), '\0');
  f.read_at(0, text.data(), f.size());
  return text;
}

}  // namespace attnsim
