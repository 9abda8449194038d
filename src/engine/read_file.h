// Reading files from outside without trusting them. Only a regular file is opened: a FIFO
// would block forever, /dev/zero never ends, a folder is not data. Every reader of outside
// files (.npy, safetensors, lessons, configs, tokenizers, zips) opens through RegularFile.
//   RegularFile f(path);            refuses anything but a regular file; f.size() from fstat
//   f.read_at(offset, p, n);        exactly n bytes, or Error ("file shrank")
//   read_text_file(path, max)       the whole file, refused before reading when over max
// Errors name the path.
#pragma once

#include <cstdint>
#include <string>

namespace attnsim {

class RegularFile {
 public:
  // `kind` finishes the refusal: "PATH: not a regular file (KIND)".
  explicit RegularFile(std::string path, const std::string& kind = "not a folder, FIFO or device");
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int64_t size() const { return size_; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Reads exactly n bytes at `offset` into p (pread, in pieces of at most 1 GiB).
  void read_at(int64_t offset, void* p, int64_t n) const;

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

std::string read_text_file(const std::string& path, int64_t max_bytes);

}  // namespace attnsim
