// Authentication of elasticd requests with MUNGE credentials, as Slurm does: the client seals
// its request as the credential's payload; munged vouches for the uid/gid and rejects replays.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace elastic::daemon {

struct Authenticated {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::string payload;
  std::string error;  // non-empty when the credential was refused
  bool ok() const { return error.empty(); }
};

// Seam between the server and MUNGE, so request handling can be tested without munged.
class CredentialCodec {
 public:
  virtual ~CredentialCodec() = default;
  // Returns the credential text, or an empty string and sets `error`.
  virtual std::string Encode(const std::string& payload, std::string& error) = 0;
  virtual Authenticated Decode(const std::string& credential) = 0;
};

// Talks to munged; `socket` empty means libmunge's default. Thread-compatible.
std::unique_ptr<CredentialCodec> MakeMungeCodec(const std::string& socket);

}  // namespace elastic::daemon
