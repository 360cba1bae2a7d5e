// GradientStash: flat per-EST gradient copies, their exchange between ranks and the reductions.
#include "agent/train/gradient_stash.h"

#include <torch/torch.h>

#include <algorithm>
#include <span>
#include <string>

#include "agent/common/errors.h"

namespace elastic::agent {
namespace {

std::span<const float> FloatsOf(const torch::Tensor& flat) {
  return {flat.data_ptr<float>(), static_cast<std::size_t>(flat.numel())};
}

// The gathered floats as one tensor (a copy: the vector dies with this call).
torch::Tensor ToTensor(std::vector<float>& floats) {
  return torch::from_blob(floats.data(), {static_cast<std::int64_t>(floats.size())},
                          torch::kFloat32)
      .clone();
}

}  // namespace

GradientStash::GradientStash(std::vector<torch::Tensor> params, std::vector<std::string> names,
                             std::int64_t ests)
    : params_(std::move(params)),
      names_(std::move(names)),
      slots_(static_cast<std::size_t>(ests)),
      captured_(static_cast<std::size_t>(ests), false) {
  for (const torch::Tensor& param : params_) numel_ += param.numel();
}

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

void GradientStash::RequireCaptured(EstRange range) const {
  if (!std::all_of(captured_.begin() + range.begin, captured_.begin() + range.end,
                   [](bool c) { return c; })) {
    throw TrainingError("gradient reduction: not every EST produced a gradient this step");
  }
}

void GradientStash::ExchangeSlots(Communicator& world, EstRange hosted) {
  RequireCaptured(hosted);
  std::vector<torch::Tensor> mine(slots_.begin() + hosted.begin, slots_.begin() + hosted.end);
  torch::Tensor contribution = torch::cat(mine).contiguous();
  std::vector<std::int64_t> counts;
  std::vector<float> all = world.AllGather(FloatsOf(contribution), counts);
  const std::int64_t ests = static_cast<std::int64_t>(slots_.size());
  if (static_cast<std::int64_t>(all.size()) != ests * numel_) {
    throw TrainingError("gradient exchange: gathered " + std::to_string(all.size()) +
                        " floats: expected " + std::to_string(ests * numel_) + " (" +
                        std::to_string(ests) + " ESTs x " + std::to_string(numel_) +
                        " parameters); do all ranks run the same model and train.ests?");
  }
  torch::Tensor gathered = ToTensor(all);
  for (std::int64_t est = 0; est < ests; ++est) {
    slots_[static_cast<std::size_t>(est)] = gathered.narrow(0, est * numel_, numel_);
    captured_[static_cast<std::size_t>(est)] = true;
  }
}

void GradientStash::ReduceMeanIntoGradients() {
  RequireCaptured({0, static_cast<std::int64_t>(slots_.size())});
  torch::NoGradGuard no_grad;
  torch::Tensor sum = slots_[0].clone();
  for (std::size_t est = 1; est < slots_.size(); ++est) sum.add_(slots_[est]);
  sum.div_(static_cast<double>(slots_.size()));
  AssignGradients(sum);
}

void GradientStash::ReduceMeanRankOrder(Communicator& world, EstRange hosted) {
  RequireCaptured(hosted);
  torch::NoGradGuard no_grad;
  torch::Tensor partial = slots_[static_cast<std::size_t>(hosted.begin)].clone();
  for (std::int64_t est = hosted.begin + 1; est < hosted.end; ++est) {
    partial.add_(slots_[static_cast<std::size_t>(est)]);
  }
  std::vector<std::int64_t> counts;
  std::vector<float> all = world.AllGather(FloatsOf(partial), counts);
  if (static_cast<std::int64_t>(all.size()) != world.size() * numel_) {
    throw TrainingError("gradient exchange (d0): gathered " + std::to_string(all.size()) +
                        " floats: expected " + std::to_string(world.size() * numel_));
  }
  torch::Tensor partials = ToTensor(all);
  torch::Tensor sum = partials.narrow(0, 0, numel_).clone();
  for (int rank = 1; rank < world.size(); ++rank) {
    sum.add_(partials.narrow(0, rank * numel_, numel_));
  }
  sum.div_(static_cast<double>(slots_.size()));
  AssignGradients(sum);
}

void GradientStash::AssignGradients(const torch::Tensor& sum) {
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

std::string GradientStash::BucketMap() const {
  std::string map;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    map +=
        names_[i] + " " + std::to_string(offset) + " " + std::to_string(params_[i].numel()) + "\n";
    offset += params_[i].numel();
  }
  return map;
}

}  // namespace elastic::agent
