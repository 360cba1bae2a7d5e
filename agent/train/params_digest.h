// The params_sha256 fingerprint printed in elastic-agent's final line (design.md §2). It is the
// contract that integration tests compare across worker counts and resize histories, so its
// definition is fixed here and must not change silently:
//
//   SHA-256 over the concatenation, in module.named_parameters() order (registration order,
//   recursing into submodules), of each parameter's values as contiguous row-major IEEE-754
//   binary32 in little-endian byte order, then, in named_buffers() order, of each buffer's
//   values as contiguous row-major little-endian bytes of its own dtype (BatchNorm's running
//   statistics: float32; num_batches_tracked: int64). No names, shapes or separators are hashed.
//   A model without buffers (the built-in ones) hashes its parameters only, as before buffers
//   were hashed. The trainer's buffers are EST 0's on rank 0 (agent/est/est_buffers.h).
#pragma once

#include <string>

namespace torch::nn {
class Module;
}

namespace elastic::agent {

// Lower-case hex (64 characters). Parameters on other devices or dtypes are copied to CPU float32
// first, so the digest describes values, not storage.
std::string ParamsSha256(const torch::nn::Module& module);

// The same over the parameters only: what every replica holds alike (buffers are per EST), for
// the checks that the replicas did not diverge.
std::string ParametersOnlySha256(const torch::nn::Module& module);

}  // namespace elastic::agent
