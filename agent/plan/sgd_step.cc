// SgdStep: mirrors torch/csrc/api/src/optim/sgd.cpp (LibTorch 1.13) for one parameter.
#include "agent/plan/sgd_step.h"

#include <torch/torch.h>

namespace elastic::agent {

SgdHyper HyperOf(const torch::optim::SGD& optimizer) {
  const auto& options =
      static_cast<const torch::optim::SGDOptions&>(optimizer.param_groups().at(0).options());
  return {options.lr(), options.momentum(), options.weight_decay()};
}

void SetLearningRate(torch::optim::SGD& optimizer, double lr) {
  static_cast<torch::optim::SGDOptions&>(optimizer.param_groups().at(0).options()).lr(lr);
}

void SgdStep(const torch::Tensor& param, torch::Tensor& buffer, const SgdHyper& hyper) {
  SgdUpdate(param.data(), param.grad().data(), buffer, hyper);
}

void SgdUpdate(const torch::Tensor& values, const torch::Tensor& grad, torch::Tensor& buffer,
               const SgdHyper& hyper) {
  torch::NoGradGuard no_grad;
  torch::Tensor d_p = grad;
  if (hyper.weight_decay != 0) d_p = d_p.add(values, hyper.weight_decay);
  if (hyper.momentum != 0) {
    if (!buffer.defined()) {
      buffer = torch::clone(d_p).detach();
    } else {
      buffer.mul_(hyper.momentum).add_(d_p, 1 - /*dampening=*/0.0);
    }
    d_p = buffer;
  }
  values.add_(d_p, -1 * hyper.lr);
}

}  // namespace elastic::agent
