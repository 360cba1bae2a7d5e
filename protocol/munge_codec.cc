// CredentialCodec backed by libmunge.
#include <munge.h>

#include <cstdlib>

#include "protocol/credential.h"

namespace elastic::daemon {
namespace {

class MungeCodec final : public CredentialCodec {
 public:
  explicit MungeCodec(std::string socket) : socket_(std::move(socket)) {}

  std::string Encode(const std::string& payload, std::string& error) override {
    munge_ctx_t ctx = NewContext(error);
    if (ctx == nullptr) return {};
    char* cred = nullptr;
    munge_err_t rc = munge_encode(&cred, ctx, payload.data(), static_cast<int>(payload.size()));
    std::string text;
    if (rc == EMUNGE_SUCCESS) {
      text = cred;
    } else {
      error = std::string("MUNGE encode failed: ") + munge_ctx_strerror(ctx);
    }
    std::free(cred);
    munge_ctx_destroy(ctx);
    return text;
  }

  Authenticated Decode(const std::string& credential) override {
    Authenticated result;
    munge_ctx_t ctx = NewContext(result.error);
    if (ctx == nullptr) return result;
    void* payload = nullptr;
    int length = 0;
    munge_err_t rc = munge_decode(credential.c_str(), ctx, &payload, &length, &result.uid,
                                  &result.gid);
    if (rc == EMUNGE_SUCCESS) {
      result.payload.assign(static_cast<const char*>(payload), static_cast<std::size_t>(length));
    } else {
      // Replayed, expired, rewound and malformed credentials all end here: nothing is trusted.
      result.error = std::string("MUNGE credential refused: ") + munge_strerror(rc);
    }
    std::free(payload);
    munge_ctx_destroy(ctx);
    return result;
  }

 private:
  munge_ctx_t NewContext(std::string& error) {
    munge_ctx_t ctx = munge_ctx_create();
    if (ctx == nullptr) {
      error = "MUNGE: out of memory";
      return nullptr;
    }
    if (!socket_.empty() && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket_.c_str()) != EMUNGE_SUCCESS) {
      error = "MUNGE: cannot use socket " + socket_;
      munge_ctx_destroy(ctx);
      return nullptr;
    }
    return ctx;
  }

  std::string socket_;
};

}  // namespace

std::unique_ptr<CredentialCodec> MakeMungeCodec(const std::string& socket) {
  return std::make_unique<MungeCodec>(socket);
}

}  // namespace elastic::daemon
