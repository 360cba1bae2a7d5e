// The interface every trainable model implements: a torch::nn::Module mapping an input batch to
// class logits. Parameters are registered in a fixed order, which fixes named_parameters() order
// and with it the params_sha256 contract (train/params_digest.h).
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace elastic::agent {

//
// A model is also a chain of blocks, forward = block N-1 ( ... block 0 (input)), so execution
// plans can treat blocks separately: gradient checkpointing recomputes chosen blocks in the
// backward pass (agent/plan/grad_checkpoint.h), pipeline stages would own runs of them.
// Whatever a plan does, the blocks' operations are the same, which keeps the bits the same.
class Model : public torch::nn::Module {
 public:
  // Logits [batch, classes] for `input` [batch, ...]. Any randomness (dropout) draws from
  // LibTorch's default CPU generator, which the trainer points at the running EST's stream.
  // Equals running every block in order.
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;

  virtual std::int64_t BlockCount() const = 0;
  // Block `index`'s output for `input` (the previous block's output). REQUIRES: index < count.
  virtual torch::Tensor ForwardBlock(std::int64_t index, const torch::Tensor& input) = 0;
  // The parameters block `index` uses, in named_parameters() order.
  virtual std::vector<torch::Tensor> BlockParameters(std::int64_t index) const = 0;
};

}  // namespace elastic::agent
