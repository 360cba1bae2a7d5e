// Gradient checkpointing (GC, Rubick §2.1; Chen et al. 2016): a model's forward pass that keeps no
// activations inside chosen blocks and recomputes them in the backward pass. LibTorch's C++ API
// has no torch.utils.checkpoint, so this is a custom autograd Function. Includes LibTorch.
//
// Bitwise equal to the plain forward/backward (docs/consistency.md, "Plans"): the recomputation
// runs the block's own operations on the same input values with grad enabled, under the same
// generator state its first run drew from (dropout masks repeat), so every gradient the block
// produces is computed by the same kernels from the same values; the block's parameter gradients
// go back to the outer backward as ordinary gradient edges, so autograd accumulates them into
// .grad exactly as without GC. The replay's draws are undone afterwards: the EST's stream ends
// where the plain run leaves it.
#pragma once

#include <torch/types.h>

namespace elastic::agent {

class Model;

// model.forward(input) with every block but the last checkpointed (the last block's activations
// are consumed at once by the loss, so recomputing them would save nothing). Thread-safety as
// the model's. REQUIRES: `model` outlives the backward pass of the result.
torch::Tensor ForwardWithRecomputation(Model& model, const torch::Tensor& input);

}  // namespace elastic::agent
