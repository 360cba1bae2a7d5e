// OffloadMirror: host master copies, gradient copies down, c-thread update, asynchronous copy up.
#include "agent/plan/offload_mirror.h"

#include <torch/torch.h>

#include "agent/plan/host_threads.h"
#include "agent/plan/sgd_step.h"
#include "agent/est/device.h"

namespace elastic::agent {
namespace {

// Host memory for a copy of `like`: pinned when `like` is on a GPU, so that copies to and from
// it can run asynchronously.
torch::Tensor HostBuffer(const torch::Tensor& like) {
  return torch::empty(like.sizes(),
                      like.options().device(torch::kCPU).pinned_memory(like.is_cuda()));
}

}  // namespace

OffloadMirror::OffloadMirror(std::vector<torch::Tensor> params, ParameterShard owned)
    : params_(std::move(params)),
      owned_(owned),
      masters_(params_.size()),
      gradients_(params_.size()) {}

void OffloadMirror::SetHostGradient(std::size_t i, const torch::Tensor& gradient) {
  gradients_[i] = gradient.view_as(params_[i]);
  gradients_given_ = true;
}

void OffloadMirror::Step(const std::vector<ParameterShard>& parts, std::size_t threads,
                         const SgdHyper& hyper, std::vector<torch::Tensor>& momentum) {
  torch::NoGradGuard no_grad;
  if (!masters_valid_) {
    for (std::size_t i = owned_.first; i < owned_.last; ++i) {
      masters_[i] = HostBuffer(params_[i]);
      masters_[i].copy_(params_[i].detach());
    }
    masters_valid_ = true;
  }
  if (!gradients_given_) {
    for (std::size_t i = owned_.first; i < owned_.last; ++i) {
      if (!gradients_[i].defined() || gradients_[i].is_pinned() != params_[i].is_cuda()) {
        gradients_[i] = HostBuffer(params_[i]);
      }
      gradients_[i].copy_(params_[i].grad(), /*non_blocking=*/true);
    }
    if (owned_.last > owned_.first) SynchronizeDevice(params_[owned_.first].device());
  }
  RunParts(parts.size(), threads, [&](std::size_t part) {
    for (std::size_t i = parts[part].first; i < parts[part].last; ++i) {
      const std::size_t p = owned_.first + i;
      SgdUpdate(masters_[p], gradients_[p], momentum[p], hyper);
    }
  });
  for (std::size_t i = owned_.first; i < owned_.last; ++i) {
    params_[i].detach().copy_(masters_[i], /*non_blocking=*/true);
  }
  gradients_given_ = false;
}

}  // namespace elastic::agent
