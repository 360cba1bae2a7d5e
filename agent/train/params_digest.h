// The params_sha256 fingerprint printed in elastic-agent's final line (design.md §2). It is the
// contract that integration tests compare across worker counts and resize histories, so its
// definition is fixed here and must not change silently:
//
//   SHA-256 over the concatenation, in module.named_parameters() order (registration order,
//   recursing into submodules), of each parameter's values as contiguous row-major IEEE-754
//   binary32 in little-endian byte order. No names, shapes, separators or buffers are hashed.
#pragma once

#include <string>

namespace torch::nn {
class Module;
}

namespace elastic::agent {

// Lower-case hex (64 characters). Parameters on other devices or dtypes are copied to CPU float32
// first, so the digest describes values, not storage.
std::string ParamsSha256(const torch::nn::Module& module);

}  // namespace elastic::agent
