// One parameter's SGD-with-momentum update, the same tensor operations in the same order as
// LibTorch 1.13's torch::optim::SGD::step applies to that parameter (dampening 0, no weight decay,
// no Nesterov: the options the trainer uses), so an owner updating its shard produces the bits a
// replica's SGD would. Includes LibTorch. Thread-safe for distinct parameters.
#pragma once

#include <torch/types.h>

namespace elastic::agent {

// `buffer` is the parameter's momentum buffer: undefined before its first update (SGD then
// starts it as a copy of the gradient). REQUIRES: param.grad() is defined.
void SgdStep(const torch::Tensor& param, torch::Tensor& buffer, double lr, double momentum);

// The same update on plain tensors (no autograd): `values` -= lr * (momentum-folded `grad`),
// all three on one device. ZeRO-Offload's host copy of a GPU parameter (sharded_update.cc).
void SgdUpdate(const torch::Tensor& values, const torch::Tensor& grad, torch::Tensor& buffer,
               double lr, double momentum);

}  // namespace elastic::agent
