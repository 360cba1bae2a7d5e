// Decoding of request payloads and encoding of responses.
#include "protocol/protocol.h"

namespace elastic::daemon {

DecodedRequest DecodeRequest(std::string_view payload) {
  if (payload.size() > kMaxPayloadBytes) {
    return {std::nullopt, "request too large: " + std::to_string(payload.size()) +
                              " bytes, limit " + std::to_string(kMaxPayloadBytes)};
  }
  nlohmann::json doc = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return {std::nullopt, "request is not valid JSON"};
  if (!doc.is_object()) return {std::nullopt, "request must be a JSON object"};
  auto op = doc.find("op");
  if (op == doc.end() || !op->is_string()) {
    return {std::nullopt, "request has no \"op\" string"};
  }
  const std::string& name = op->get_ref<const std::string&>();
  static const std::pair<const char*, Op> kOps[] = {{"status", Op::kStatus},
                                                   {"register", Op::kRegister},
                                                   {"poll", Op::kPoll},
                                                   {"deregister", Op::kDeregister},
                                                   {"resize", Op::kResize}};
  for (const auto& [spelling, op_value] : kOps) {
    if (name == spelling) return {Request{op_value, std::move(doc)}, {}};
  }
  return {std::nullopt,
          "unknown op \"" + name + "\": expected status, register, poll, deregister or resize"};
}

std::string ErrorResponse(std::string_view message) {
  nlohmann::json body = {{"ok", false}, {"error", message}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string OkResponse(nlohmann::json body) {
  body["ok"] = true;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace elastic::daemon
