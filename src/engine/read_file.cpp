#include "read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cost.h"
#include "error.h"

namespace attnsim {

std::string read_text_file(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file (not a folder, FIFO or device)");
  }
  if (st.st_size > max_bytes) {
    ::close(fd);
    throw Error(path + ": " + human_bytes(st.st_size) + " is larger than the " + human_bytes(max_bytes) +
                " a file of this kind may have");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t r = ::read(fd, text.data() + done, text.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  // shrank while reading: keep what is there
    done += static_cast<size_t>(r);
  }
  ::close(fd);
  text.resize(done);
  return text;
}

}  // namespace attnsim
