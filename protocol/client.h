// Client side of elasticd's protocol: seal a JSON request with MUNGE, send it, read the answer.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/credential.h"

namespace elastic::daemon {

// Throws std::runtime_error with an actionable message (daemon down, the socket served by a uid
// other than root or the caller's — checked before the credential is sent —, MUNGE failure, bad
// reply, no answer within `timeout`: elasticd answers at once except for `register`, which waits on
// Slurm's job lookup).
nlohmann::json SendRequest(const std::string& socket_path, CredentialCodec& codec,
                           const nlohmann::json& request,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace elastic::daemon
