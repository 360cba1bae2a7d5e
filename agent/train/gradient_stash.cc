// GradientStash: flat per-EST gradient copies and the EST-ordered reduction.
#include "agent/train/gradient_stash.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "agent/common/errors.h"

namespace elastic::agent {

GradientStash::GradientStash(std::vector<torch::Tensor> params, std::int64_t ests)
    : params_(std::move(params)),
      slots_(static_cast<std::size_t>(ests)),
      captured_(static_cast<std::size_t>(ests), false) {}

void GradientStash::Capture(std::int64_t est_id) {
  std::vector<torch::Tensor> flat;
  flat.reserve(params_.size());
  for (const torch::Tensor& param : params_) {
    const torch::Tensor& grad = param.grad();
    flat.push_back(grad.defined() ? grad.detach().reshape(-1) : torch::zeros({param.numel()}));
  }
  slots_[static_cast<std::size_t>(est_id)] = torch::cat(flat);
  captured_[static_cast<std::size_t>(est_id)] = true;
}

void GradientStash::ReduceMeanIntoGradients() {
  if (!std::all_of(captured_.begin(), captured_.end(), [](bool c) { return c; })) {
    throw TrainingError("gradient reduction: not every EST produced a gradient this step");
  }
  torch::NoGradGuard no_grad;
  torch::Tensor sum = slots_[0].clone();
  for (std::size_t est = 1; est < slots_.size(); ++est) sum.add_(slots_[est]);
  sum.div_(static_cast<double>(slots_.size()));

  std::int64_t offset = 0;
  for (torch::Tensor& param : params_) {
    torch::Tensor mean = sum.narrow(0, offset, param.numel()).view_as(param);
    if (param.grad().defined()) {
      param.mutable_grad().copy_(mean);
    } else {
      param.mutable_grad() = mean.clone();
    }
    offset += param.numel();
  }
  std::fill(captured_.begin(), captured_.end(), false);
}

}  // namespace elastic::agent
