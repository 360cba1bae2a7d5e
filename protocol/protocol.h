// elasticd's wire format (docs/protocol.md). One request per connection: the client sends one
// line, a MUNGE credential whose payload is a JSON object {"op": "...", ...}; the daemon answers
// one JSON line {"ok": true, ...} or {"ok": false, "error": "..."} and closes. This header is the
// envelope; the messages inside it and their codec are messages.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace elastic::daemon {

// A credential line longer than this is refused unread (MUNGE base64 of a 16 KiB payload fits).
constexpr std::size_t kMaxRequestLineBytes = 64 * 1024;
constexpr std::size_t kMaxPayloadBytes = 16 * 1024;

enum class Op {
  kStatus,      // anyone: the caller's jobs (all for admins) and recent decisions
  kRegister,    // a job's supervisor: this running job of mine is elastic
  kPoll,        // a job's supervisor: my state; any order for me?
  kDeregister,  // a job's supervisor: training is over
  kResize,      // admin: order job J to N nodes now
};

struct Request {
  Op op = Op::kStatus;
  nlohmann::json args;  // the whole object, for op-specific fields
};

struct DecodedRequest {
  std::optional<Request> request;
  std::string error;  // why the payload was rejected
};

// Never throws: malformed JSON, a non-object, a missing/unknown op are all reported.
DecodedRequest DecodeRequest(std::string_view payload);

std::string ErrorResponse(std::string_view message);
std::string OkResponse(nlohmann::json body);

}  // namespace elastic::daemon
