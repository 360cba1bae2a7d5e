// The interface every trainable model implements: a torch::nn::Module mapping an input batch to
// class logits. Parameters are registered in a fixed order, which fixes named_parameters() order
// and with it the params_sha256 contract (train/params_digest.h).
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

namespace elastic::agent {

class Model : public torch::nn::Module {
 public:
  // Logits [batch, classes] for `input` [batch, ...]. Any randomness (dropout) draws from
  // LibTorch's default CPU generator, which the trainer points at the running EST's stream.
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
};

}  // namespace elastic::agent
