// libFuzzer target: elasticd's request decoder (DecodeRequest) and error reply on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace elastic::daemon;
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  DecodedRequest decoded = DecodeRequest(payload);  // documented never to throw
  // Exactly one of a request and a reason, and a request is always an object.
  if (decoded.request.has_value() == !decoded.error.empty()) std::abort();
  if (decoded.request && !decoded.request->args.is_object()) std::abort();
  // The reason may quote the caller's bytes (an unknown op): the reply must stay valid JSON.
  const std::string reply = ErrorResponse(decoded.error);
  if (!nlohmann::json::accept(reply)) std::abort();
  return 0;
}
