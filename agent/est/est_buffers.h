// The model's buffers as EST state (EasyScale §3.3: "the BatchNorm operator tracks its running
// states"; docs/consistency.md, "Buffers"): each EST keeps its own copy of every buffer in its
// context, and its forward passes read and update only that copy, so a buffer's value is a
// function of the EST's own batches, never of which ESTs share a process. The model's own
// buffer tensors are a working area: an EST's copy is loaded into them for its turn. Between
// steps they hold the first hosted EST's (on rank 0, EST 0's: what the checkpoint's "params"
// record, the digest, eval and export carry, as DDP keeps rank 0's). Includes LibTorch.
#pragma once

#include <torch/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "agent/est/est_context.h"

namespace torch::nn {
class Module;
}

namespace elastic::agent {

// Gives every context its own copy of `model`'s current buffers (no-op without buffers).
void AdoptModelBuffers(const torch::nn::Module& model, std::vector<EstContext>& ests);

// Copies `est`'s buffers into the model's (no-op without buffers).
void LoadEstBuffers(torch::nn::Module& model, const EstContext& est);

// While alive, the model's buffers are `est`'s; on destruction their updated values are saved
// back into `est`. Not thread-safe: one scope at a time per model.
class EstBufferScope {
 public:
  EstBufferScope(torch::nn::Module& model, EstContext& est);
  ~EstBufferScope();
  EstBufferScope(const EstBufferScope&) = delete;
  EstBufferScope& operator=(const EstBufferScope&) = delete;

 private:
  torch::nn::Module& model_;
  EstContext& est_;
};

// Raw bytes of `buffers` one after another (each contiguous, native little-endian), for the
// checkpoint's est_buffers/<id> records, and back into tensors shaped like `like`. FromBytes
// returns false when the size does not match.
std::string BuffersToBytes(const std::vector<torch::Tensor>& buffers);
bool BuffersFromBytes(std::string_view bytes, const std::vector<torch::Tensor>& like,
                      std::vector<torch::Tensor>& out);

}  // namespace elastic::agent
