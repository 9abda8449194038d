#include "digest.h"

#include <openssl/evp.h>

#include "engine/error.h"

namespace attnsim::hub {

struct Digest::Ctx {
  EVP_MD_CTX* md = nullptr;
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Digest::Digest(Kind kind, int64_t size) : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  if (!ctx_->md || EVP_DigestInit_ex(ctx_->md, kind == Kind::Sha256 ? EVP_sha256() : EVP_sha1(), nullptr) != 1)
    throw Error("OpenSSL could not start a digest");
  if (kind == Kind::GitSha1) {
    const std::string header = "blob " + std::to_string(size);
    update(header.c_str(), header.size() + 1);  // with its NUL
  }
}

Digest::~Digest() = default;

void Digest::update(const void* data, size_t n) {
  if (EVP_DigestUpdate(ctx_->md, data, n) != 1) throw Error("OpenSSL digest update failed");
}

std::string Digest::hex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_->md, out, &n) != 1) throw Error("OpenSSL digest failed");
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned int i = 0; i < n; ++i) {
    s += digits[out[i] >> 4];
    s += digits[out[i] & 15];
  }
  return s;
}

}  // namespace attnsim::hub
