// One parameter's SGD-with-momentum update, the same tensor operations in the same order as
// LibTorch 1.13's torch::optim::SGD::step applies to that parameter (dampening 0, no Nesterov:
// the options the trainer uses; weight decay and the step's learning rate from its options), so
// an owner updating its shard produces the bits a replica's SGD would. Includes LibTorch.
// Thread-safe for distinct parameters.
#pragma once

#include <torch/optim/sgd.h>
#include <torch/types.h>

namespace elastic::agent {

// The hyperparameters of one step's update: the trainer's SGD options at that step.
struct SgdHyper {
  double lr = 0;
  double momentum = 0;
  double weight_decay = 0;
};
// Those of `optimizer`'s (single) parameter group.
SgdHyper HyperOf(const torch::optim::SGD& optimizer);
// Sets the learning rate the next step() uses (lr_schedule.h gives it per step).
void SetLearningRate(torch::optim::SGD& optimizer, double lr);

// `buffer` is the parameter's momentum buffer: undefined before its first update (SGD then
// starts it as a copy of the gradient). REQUIRES: param.grad() is defined.
void SgdStep(const torch::Tensor& param, torch::Tensor& buffer, const SgdHyper& hyper);

// The same update on plain tensors (no autograd): `values` -= lr * (momentum-folded `grad` plus
// weight_decay * `values`), all on one device. ZeRO-Offload's host copy of a GPU parameter
// (sharded_update.cc).
void SgdUpdate(const torch::Tensor& values, const torch::Tensor& grad, torch::Tensor& buffer,
               const SgdHyper& hyper);

}  // namespace elastic::agent
