#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <streambuf>
#include <vector>

#include "error.h"

namespace attnsim {

namespace fs = std::filesystem;

namespace {

// The umask a new file or folder is created under. Emscripten's umask() reads 0777 (it keeps
// no mask of its own), which would leave files nobody may read and folders nobody may write
// into: the browser's in-memory file system gets the usual 022.
mode_t process_umask() {
#ifdef __EMSCRIPTEN__
  return 022;
#else
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
#endif
}

// write(2) until all n bytes are out; returns 0 or the errno of the failure.
int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

// "out/" -> "out": a trailing slash names the same folder but has no filename.
fs::path without_trailing_slash(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return fs::path(p);
}

}  // namespace

// [SECTION] AtomicFile

// A 64 KiB buffer in front of the file descriptor; remembers the first errno.
class AtomicFile::Buf : public std::streambuf {
 public:
  Buf(int fd, int* err) : fd_(fd), err_(err), buffer_(64 * 1024) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int sync() override {
    if (*err_) return -1;
    const size_t n = static_cast<size_t>(pptr() - pbase());
    if (const int e = write_all(fd_, pbase(), n)) {
      *err_ = e;
      return -1;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return 0;
  }
  int_type overflow(int_type ch) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

 private:
  int fd_;
  int* err_;
  std::vector<char> buffer_;
};

void check_replaceable(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // nothing there yet
  if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0) return;  // a dangling link
  if (S_ISREG(st.st_mode)) return;
  const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  throw Error(path + " is " + kind + ", not a file attnsim may replace; nothing was written");
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const fs::path target(path_);
  if (path_.empty() || path_.back() == '/' || target.filename().empty())
    throw Error("'" + path_ + "' is not a file name");
  check_replaceable(path_);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (folder / ("." + target.filename().string() + ".tmpXXXXXX")).string();
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) throw Error(path_ + ": cannot write here (" + std::strerror(errno) + ")");
  tmp_ = tmpl;
  // mkstemp makes 0600; a finished file gets the usual 0666 minus the umask.
  ::fchmod(fd_, 0666 & ~process_umask());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  tmp_.clear();
  throw Error(path_ + ": " + what + " (" + std::strerror(err) + "); nothing was written");
}

void AtomicFile::write(const void* data, size_t n) {
  if (fd_ < 0) throw Error(path_ + ": write after commit");
  if (stream_) stream_->flush();  // keep the order of stream and direct writes
  if (errno_) fail("write failed", errno_);
  if (const int e = write_all(fd_, static_cast<const char*>(data), n)) fail("write failed", e);
}

std::ostream& AtomicFile::stream() {
  if (!stream_) {
    buf_ = std::make_unique<Buf>(fd_, &errno_);
    stream_ = std::make_unique<std::ostream>(buf_.get());
  }
  return *stream_;
}

void AtomicFile::commit() {
  if (fd_ < 0) throw Error(path_ + ": committed twice");
  if (stream_) stream_->flush();
  if (errno_ || (stream_ && !*stream_)) fail("write failed", errno_ ? errno_ : EIO);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int e = errno;
    fail("write failed at close", e);
  }
  try {
    check_replaceable(path_);  // again: something may have appeared there while we wrote
  } catch (const Error&) {
    ::unlink(tmp_.c_str());
    tmp_.clear();
    throw;
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot move the finished file into place", errno);
  tmp_.clear();
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

bool write_file_atomically(const std::string& path, std::string_view bytes, std::string* error) {
  try {
    write_file_atomically(path, bytes);
    return true;
  } catch (const Error& e) {
    if (error) *error = one_line(e.what());
    return false;
  }
}

// [SECTION] folders

void write_folder_atomically(const std::string& dir, const std::function<void(const std::string&)>& fill,
                             bool force) {
  const fs::path target = without_trailing_slash(dir);
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(target, ec));
  if (exists && !fs::is_directory(fs::symlink_status(target, ec)))
    throw Error(dir + " exists and is not a folder; choose a new folder");
  const bool empty = exists && fs::is_empty(target, ec) && !ec;
  if (exists && !empty && !force)
    throw Error(dir + " is a folder that is not empty; choose a new or empty folder, or add --force to replace it");
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) throw Error(dir + ": the parent folder " + parent.string() + " does not exist");
  std::string tmpl = (parent / ("." + target.filename().string() + ".tmpXXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw Error(dir + ": cannot create a folder here (" + std::strerror(errno) + ")");
  const fs::path tmp(tmpl);
  ::chmod(tmp.c_str(), 0777 & ~process_umask());  // mkdtemp makes 0700
  try {
    fill(tmp.string());
    if (exists && !empty) {  // --force: swap the old folder out, the new one in, then drop the old
      const fs::path old = parent / ("." + target.filename().string() + ".old" + std::to_string(::getpid()));
      fs::rename(target, old);
      try {
        fs::rename(tmp, target);
      } catch (...) {
        fs::rename(old, target, ec);
        throw;
      }
      fs::remove_all(old, ec);
    } else {
      fs::rename(tmp, target);  // replaces an empty folder
    }
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw Error(dir + ": " + e.code().message() + "; nothing was written");
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace attnsim
