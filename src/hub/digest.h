// The two hashes that name blobs in the Hugging Face cache, computed while the bytes arrive
// (OpenSSL's EVP API, not a hand-written hash):
//   Sha256   an LFS file's sha256 (the weights)
//   GitSha1  a small file's git blob id: sha1("blob <size>\0" + bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace attnsim::hub {

class Digest {
 public:
  enum class Kind { Sha256, GitSha1 };
  // `size` is the file's whole size: the git blob header holds it.
  Digest(Kind kind, int64_t size);
  ~Digest();
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  void update(const void* data, size_t n);
  std::string hex();  // lowercase; call once
  static const char* name(Kind kind) { return kind == Kind::Sha256 ? "sha256" : "git sha1"; }

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace attnsim::hub
