// Files that are either written whole or not at all.
//
// Every file attnsim writes (PNG, slides, index.md, geometry, .npy dumps, JSON, checkpoints,
// figures, training logs) goes through here, so that a full disk, a read-only folder or a
// file-size limit gives one Error line and leaves nothing behind:
//   1. the bytes go to a temporary file in the target's own folder (".name.tmpXXXXXX", so the
//      final rename never crosses a file system);
//   2. every write(2) is checked (short writes retried, ENOSPC / EFBIG / EIO reported);
//   3. close(2) is checked (NFS and some file systems report write errors only there);
//   4. only then is the temporary renamed over the target (atomic on POSIX).
// No fsync: the aim is "never a half-written file after an error we could see", not
// durability across a power cut (fsync on every dump file cost more than the dump).
// On any failure, or when an AtomicFile is destroyed without commit(), the temporary is
// removed. Nothing here writes to stdout/stderr: callers show the Error.
//
// API
//   write_file_atomically(path, bytes)          one call for a buffer already in memory
//   AtomicFile f(path);                          streaming writer (PNG callbacks, JSON dumps)
//     f.write(data, n);  f.stream() << ...;      either, or both, in order
//     f.commit();                                 checked flush + close + rename; throws Error
//   write_folder_atomically(dir, fill, force)    a whole folder: fill(tmp_dir) writes files
//                                                into a fresh hidden folder that is renamed
//                                                into place only when fill returns
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace attnsim {

class AtomicFile {
 public:
  // Creates the temporary next to `path`; throws Error (e.g. the folder does not exist or is
  // not writable), naming `path`.
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // without commit(): removes the temporary
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Throws Error on the first failed write (the errno text and `path` in the message).
  void write(const void* data, size_t n);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  // A buffered stream over the same file, for code that writes to std::ostream. Its errors
  // are kept and reported by commit().
  std::ostream& stream();
  // Flushes, closes and renames into place; throws Error (and removes the temporary) if any
  // write, the close or the rename failed. Call once.
  void commit();

  const std::string& path() const { return path_; }

 private:
  class Buf;
  void fail(const std::string& what, int err);
  std::string path_, tmp_;
  int fd_ = -1;
  int errno_ = 0;  // first write error seen by the stream
  std::unique_ptr<Buf> buf_;
  std::unique_ptr<std::ostream> stream_;
};

// A write may replace a regular file, or a link to one or to nothing (rename replaces the
// link, not what it points to), never anything else: the rename would turn /dev/full, a FIFO
// or a socket (or a link to one) into a regular file. Throws Error ("PATH is a character device, not a file attnsim may replace") when
// something else is there; AtomicFile checks it when created and again before its rename, and
// commands call it to refuse an --out before any work.
void check_replaceable(const std::string& path);

void write_file_atomically(const std::string& path, std::string_view bytes);
// The same for callers that report a failure as a line rather than an exception (the figure
// sinks): false, with the one-line reason in *error.
bool write_file_atomically(const std::string& path, std::string_view bytes, std::string* error);

// `dir` may end in '/', may be missing or an empty folder; a non-empty one is refused unless
// `force` (then it is replaced as a whole once fill succeeded). Throws Error; on failure
// nothing is left behind and an existing folder is untouched.
void write_folder_atomically(const std::string& dir, const std::function<void(const std::string& tmp_dir)>& fill,
                             bool force = false);

}  // namespace attnsim
