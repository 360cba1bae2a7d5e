// Incremental SHA-256 (OpenSSL EVP) for the parameter fingerprint that tests compare bitwise.
// Not thread-safe; one object per digest. Throws TrainingError if OpenSSL fails (out of memory).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace elastic::agent {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, std::size_t size);
  // Lower-case hex of the digest (64 characters). REQUIRES: called once, after the Updates.
  std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace elastic::agent
