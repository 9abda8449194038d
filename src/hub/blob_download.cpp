#include "blob_download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cache_errors.h"
#include "digest.h"
#include "engine/error.h"
#include "engine/read_file.h"
#include "url_text.h"

namespace attnsim::hub {

namespace fs = std::filesystem;

namespace {

// blobs/<hash>.incomplete, opened for appending. Not an AtomicFile: its whole point is to
// survive a failed run so that the next one resumes it. Only a regular file is opened (no
// link followed), and every write is checked.
class PartialFile {
 public:
  PartialFile(const RepoCache& cache, std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) cache_write_failed(cache, path_, errno);
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("cannot open");
    if (!S_ISREG(st.st_mode)) throw Error(path_ + ": not a regular file; remove it and run again");
    size_ = st.st_size;
    if (::lseek(fd_, 0, SEEK_END) < 0) fail("cannot seek");
  }
  ~PartialFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  int64_t size() const { return size_; }
  // Both return "" or the reason they failed, which the sink turns into its refusal.
  std::string truncate() {
    if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) return path_ + ": cannot empty: " + std::strerror(errno);
    size_ = 0;
    return "";
  }
  std::string append(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return path_ + ": write failed: " + std::strerror(w < 0 ? errno : EIO);
      p += w;
      n -= static_cast<size_t>(w);
      size_ += w;
    }
    return "";
  }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("write failed at close");
  }

 private:
  [[noreturn]] void fail(const char* what) { throw Error(path_ + ": " + what + ": " + std::strerror(errno)); }
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// .locks/models--ORG--NAME/<hash>.lock (cache.h), held from before the .incomplete is opened
// until the blob is in place; closing the descriptor releases it. Waits as huggingface_hub's
// filelock does (polling, no time limit), but gives up when the cancel flag is set.
class BlobLock {
 public:
  BlobLock(const RepoCache& cache, const std::string& path, const std::atomic<bool>* cancel,
           const std::string& where) {
    make_cache_dir(cache, fs::path(path).parent_path().string());
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) cache_write_failed(cache, path, errno);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        const int err = errno;
        ::close(fd_);
        throw Error(path + ": cannot take the download lock: " + std::strerror(err));
      }
      if (cancel && cancel->load()) {
        ::close(fd_);
        throw Error(where + ": cancelled while another process held " + path);
      }
      ::usleep(100 * 1000);
    }
  }
  ~BlobLock() { ::close(fd_); }
  BlobLock(const BlobLock&) = delete;
  BlobLock& operator=(const BlobLock&) = delete;

 private:
  int fd_ = -1;
};

// A whole decimal number (Content-Length), or -1.
int64_t parse_count(const std::string& s) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(s);
}

// "\"abc\"" or "W/\"abc\"" -> "abc" (huggingface_hub's _normalize_etag).
std::string normalized_etag(std::string e) {
  if (e.rfind("W/", 0) == 0) e = e.substr(2);
  if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
  return e;
}

// The reason to refuse the answer's headers, or "" (see blob_download.h).
std::string check_headers(const HttpResponse& r, const BlobJob& job, int64_t start) {
  const int64_t size = job.remote.size;
  const auto has = [](const Headers& h, const char* k) { return h.count(k) ? &h.at(k) : nullptr; };
  if (const auto* c = has(r.first, "x-repo-commit"); c && *c != job.commit)
    return "the Hub sent commit " + one_line(*c) + " for commit " + job.commit;
  if (const auto* s = has(r.first, "x-linked-size"); s && parse_count(*s) != size)
    return "the Hub's X-Linked-Size " + one_line(*s) + " differs from the model info's " + std::to_string(size);
  if (const auto* e = has(r.first, "x-linked-etag"); e && job.remote.lfs && normalized_etag(*e) != job.remote.hash)
    return "the Hub's X-Linked-Etag " + one_line(*e) + " differs from the model info's sha256 " + job.remote.hash;
  if (const auto* l = has(r.last, "content-length"); l && parse_count(*l) != size - start)
    return "Content-Length " + one_line(*l) + " where " + std::to_string(size - start) + " bytes were due";
  if (r.status == 206) {
    const std::string want = "bytes " + std::to_string(start) + "-" + std::to_string(size - 1) + "/" + std::to_string(size);
    const auto* range = has(r.last, "content-range");
    if (!range || *range != want) return "Content-Range " + (range ? one_line(*range) : "(none)") + " where " + want + " was asked";
  }
  return "";
}

void hash_kept_part(const std::string& path, int64_t n, Digest& digest) {
  if (n == 0) return;
  const RegularFile f(path);
  std::vector<char> buf(1 << 20);
  for (int64_t at = 0; at < n;) {
    const int64_t step = std::min<int64_t>(n - at, static_cast<int64_t>(buf.size()));
    f.read_at(at, buf.data(), step);
    digest.update(buf.data(), static_cast<size_t>(step));
    at += step;
  }
}

}  // namespace

int64_t fetch_blob(const RepoCache& cache, const BlobJob& job, HttpRequest request, const RequestContext& context,
                   const std::function<void(int64_t, int64_t)>& progress) {
  const std::string blob = cache.blob(job.remote.hash), part_path = cache.incomplete(job.remote.hash);
  const int64_t size = job.remote.size;
  const auto in_place = [&] {
    std::error_code ec;
    return fs::is_regular_file(blob, ec) && static_cast<int64_t>(fs::file_size(blob, ec)) == size && !ec;
  };
  if (in_place()) {
    progress(size, 0);
    return 0;
  }
  make_cache_dir(cache, cache.root + "/blobs");
  const std::string where = context.model + ": " + job.file;
  const BlobLock lock(cache, cache.lock(job.remote.hash), request.cancel, where);
  if (in_place()) {  // another process fetched it while this one waited
    progress(size, 0);
    return 0;
  }
  const Digest::Kind kind = job.remote.lfs ? Digest::Kind::Sha256 : Digest::Kind::GitSha1;
  PartialFile part(cache, part_path);
  if (part.size() > size) {  // longer than the file: not a prefix of it
    if (const std::string why = part.truncate(); !why.empty()) throw Error(why);
  }
  auto digest = std::make_unique<Digest>(kind, size);
  hash_kept_part(part_path, part.size(), *digest);
  int64_t received = 0;
  if (part.size() < size) {
    request.offset = part.size();
    std::string refusal;
    bool first = true, overran = false;
    const Sink sink = [&](const HttpResponse& r, const char* p, size_t n) {
      if (first) {
        first = false;
        if (r.status != 206 && request.offset > 0) {  // the server ignored the Range: start over
          refusal = part.truncate();
          if (!refusal.empty()) return false;
          digest = std::make_unique<Digest>(kind, size);
        }
        refusal = check_headers(r, job, part.size());
        if (!refusal.empty()) return false;
      }
      if (static_cast<int64_t>(n) > size - part.size()) {
        refusal = "the server sent more than the file's " + std::to_string(size) + " bytes; nothing was kept";
        overran = true;
        return false;
      }
      refusal = part.append(p, n);
      if (!refusal.empty()) return false;
      digest->update(p, n);
      received += static_cast<int64_t>(n);
      return true;
    };
    const HttpResult r = http_get(request, sink, [&] { progress(part.size(), received); });
    if (r.outcome == Outcome::SinkStopped) {
      if (overran) ::unlink(part_path.c_str());  // a server that sends past the size sent no prefix to resume
      throw Error(where + ": " + refusal);
    }
    const bool cut = r.outcome == Outcome::Cut || (r.outcome == Outcome::Done && r.response.status / 100 == 2 && part.size() < size);
    if (cut)
      throw Error(where + ": the connection ended after " + std::to_string(part.size()) + " of " + std::to_string(size) +
                  " bytes" + (r.outcome == Outcome::Cut ? " (" + one_line(without_credentials(r.detail)) + ")" : std::string()) +
                  "; ask for the model again to resume (kept in " + part_path + ")");
    RequestContext c = context;
    c.what = job.file;
    check_response(r, c);
  }
  part.close();
  progress(part.size(), received);
  const std::string got = digest->hex();
  if (got != job.remote.hash) {
    ::unlink(part_path.c_str());
    throw Error(where + ": " + Digest::name(kind) + " mismatch: the Hub's model info says " + job.remote.hash + ", the " +
                std::to_string(size) + " bytes received hash to " + got + "; nothing was kept");
  }
  if (::rename(part_path.c_str(), blob.c_str()) != 0)
    throw Error(blob + ": cannot move the verified download into place: " + std::strerror(errno));
  return received;
}

}  // namespace attnsim::hub
