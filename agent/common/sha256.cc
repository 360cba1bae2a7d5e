// Sha256 over OpenSSL's EVP interface (the low-level SHA256_* calls are deprecated in 3.0).
#include "agent/common/sha256.h"

#include <openssl/evp.h>

#include "agent/common/errors.h"

namespace elastic::agent {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->md = EVP_MD_CTX_new();
  if (context_->md == nullptr || EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr) != 1) {
    throw TrainingError("sha256: cannot initialise OpenSSL digest");
  }
}

Sha256::~Sha256() = default;

void Sha256::Update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(context_->md, data, size) != 1) {
    throw TrainingError("sha256: OpenSSL digest update failed");
  }
}

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->md, digest, &length) != 1) {
    throw TrainingError("sha256: OpenSSL digest final failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace elastic::agent
