// SgdStep: mirrors torch/csrc/api/src/optim/sgd.cpp (LibTorch 1.13) for one parameter.
#include "agent/plan/sgd_step.h"

#include <torch/torch.h>

namespace elastic::agent {

void SgdStep(const torch::Tensor& param, torch::Tensor& buffer, double lr, double momentum) {
  SgdUpdate(param.data(), param.grad().data(), buffer, lr, momentum);
}

void SgdUpdate(const torch::Tensor& values, const torch::Tensor& grad, torch::Tensor& buffer,
               double lr, double momentum) {
  torch::NoGradGuard no_grad;
  torch::Tensor d_p = grad;
  if (momentum != 0) {
    if (!buffer.defined()) {
      buffer = torch::clone(d_p).detach();
    } else {
      buffer.mul_(momentum).add_(d_p, 1 - /*dampening=*/0.0);
    }
    d_p = buffer;
  }
  values.add_(d_p, -1 * lr);
}

}  // namespace elastic::agent
