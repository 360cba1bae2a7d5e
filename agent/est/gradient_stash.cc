// GradientStash: per-EST slots, their exchange between ranks, the running fold and reductions.
#include "agent/est/gradient_stash.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "agent/common/errors.h"
#ifdef ELASTIC_HAVE_NCCL
#include "agent/comm/nccl_communicator.h"
#include "agent/comm/slot_fold.h"
#endif

namespace elastic::agent {
namespace {

torch::Tensor FlatView(float* data, std::int64_t numel) {
  return torch::from_blob(data, {numel}, torch::kFloat32);
}

// Installs `value` (a fresh host tensor shaped like `param`) as the gradient on the parameter's
// device, reusing the existing gradient tensor when there is one.
void AssignGradient(torch::Tensor& param, const torch::Tensor& value) {
  if (param.grad().defined()) {
    param.mutable_grad().copy_(value);
  } else {
    param.mutable_grad() = value.to(param.device());
  }
}

// A gradient's values in host memory (the slots and the exchange are host buffers): the tensor
// itself on the CPU, a copy from a GPU.
torch::Tensor HostValues(const torch::Tensor& grad) {
  return grad.detach().to(torch::kCPU).contiguous();
}

}  // namespace

GradientStash::GradientStash(std::vector<torch::Tensor> params, std::vector<std::string> names,
                             std::int64_t ests)
    : params_(std::move(params)),
      names_(std::move(names)),
      ests_(ests),
      captured_(static_cast<std::size_t>(ests), false),
      grad_version_(params_.size(), 0),
      grad_impl_(params_.size(), nullptr) {
  for (const torch::Tensor& param : params_) {
    offsets_.push_back(numel_);
    numel_ += param.numel();
  }
}

void GradientStash::UseDeviceSlots(NcclCommunicator& nccl,
                                   std::vector<std::int64_t> slots_per_rank) {
#ifdef ELASTIC_HAVE_NCCL
  std::int64_t total = 0;
  for (std::int64_t slots : slots_per_rank) total += slots;
  if (total != ests_ || static_cast<int>(slots_per_rank.size()) != nccl.size()) {
    throw TrainingError("gradient exchange (NCCL): " + std::to_string(slots_per_rank.size()) +
                        " ranks host " + std::to_string(total) + " EST slots: expected " +
                        std::to_string(nccl.size()) + " ranks hosting " + std::to_string(ests_));
  }
  nccl_ = &nccl;
  slots_per_rank_ = std::move(slots_per_rank);
#else
  (void)nccl;
  (void)slots_per_rank;
  throw std::logic_error("GradientStash::UseDeviceSlots: built without NCCL");
#endif
}

void GradientStash::RequireHostSlots(const char* what) const {
  if (device_slots()) {
    throw TrainingError(std::string("gradient reduction: ") + what +
                        " reads host slots, but this run's slots are on the GPU (NCCL)");
  }
}

void GradientStash::Capture(std::int64_t est_id) {
  if (device_slots()) {
    CaptureOnDevice(est_id);
    return;
  }
  if (flat_.empty()) flat_.resize(static_cast<std::size_t>(ests_ * numel_));
  float* slot = Slot(est_id);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const torch::Tensor& grad = params_[i].grad();
    float* out = slot + offsets_[i];
    const auto bytes = static_cast<std::size_t>(params_[i].numel()) * sizeof(float);
    if (!grad.defined()) {
      std::memset(out, 0, bytes);
      continue;
    }
    const torch::Tensor values = HostValues(grad);
    std::memcpy(out, values.data_ptr<float>(), bytes);
  }
  captured_[static_cast<std::size_t>(est_id)] = true;
}

void GradientStash::RequireCaptured(EstRange range) const {
  if (!std::all_of(captured_.begin() + range.begin, captured_.begin() + range.end,
                   [](bool c) { return c; })) {
    throw TrainingError("gradient reduction: not every EST produced a gradient this step");
  }
}

void GradientStash::RequireAccumulated(EstRange range) const {
  if (accumulated_ != range) {
    throw TrainingError("gradient reduction: ESTs " + ToString(accumulated_) +
                        " were folded this step: expected " + ToString(range));
  }
}

void GradientStash::ResetMarks() {
  std::fill(captured_.begin(), captured_.end(), false);
  accumulated_ = {};
}

void GradientStash::ExchangeSlots(Communicator& world, EstRange hosted) {
  RequireCaptured(hosted);
  if (device_slots()) {
    ExchangeDeviceSlots(hosted);
    return;
  }
  std::span<const float> mine(Slot(hosted.begin), static_cast<std::size_t>(hosted.size() * numel_));
  std::vector<std::int64_t> counts;
  std::vector<float> all = world.AllGather(mine, counts);
  if (static_cast<std::int64_t>(all.size()) != ests_ * numel_) {
    throw TrainingError("gradient exchange: gathered " + std::to_string(all.size()) +
                        " floats: expected " + std::to_string(ests_ * numel_) + " (" +
                        std::to_string(ests_) + " ESTs x " + std::to_string(numel_) +
                        " parameters); do all ranks run the same model and train.ests?");
  }
  flat_ = std::move(all);  // already in slot layout: no copy
  std::fill(captured_.begin(), captured_.end(), true);
}

void GradientStash::FoldIntoGradients(float* partials, std::int64_t count) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const std::int64_t n = params_[i].numel();
    torch::Tensor sum = FlatView(partials + offsets_[i], n).clone();
    for (std::int64_t k = 1; k < count; ++k)
      sum.add_(FlatView(partials + k * numel_ + offsets_[i], n));
    sum.div_(static_cast<double>(ests_));
    AssignGradient(params_[i], sum.view_as(params_[i]));
  }
  ResetMarks();
}

void GradientStash::ReduceScatterMeanIntoGradients(Communicator& world, EstRange hosted) {
  RequireHostSlots("the reduce-scatter fold");
  RequireCaptured(hosted);
  const int ranks = world.size();
  auto chunk_begin = [&](int r) { return numel_ * r / ranks; };
  ExchangeBuffers& x = exchange_;
  x.send.resize(static_cast<std::size_t>(hosted.size() * numel_));
  float* out = x.send.data();
  std::vector<std::int64_t> send_counts(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    for (std::int64_t est = hosted.begin; est < hosted.end; ++est) {
      out = std::copy(Slot(est) + chunk_begin(r), Slot(est) + chunk_begin(r + 1), out);
    }
    send_counts[static_cast<std::size_t>(r)] = hosted.size() * (chunk_begin(r + 1) - chunk_begin(r));
  }
  std::vector<std::int64_t> recv_counts;
  world.AllToAll(x.send, send_counts, recv_counts, x.received);
  const std::int64_t n = chunk_begin(world.rank() + 1) - chunk_begin(world.rank());
  if (static_cast<std::int64_t>(x.received.size()) != ests_ * n) {
    throw TrainingError("gradient exchange: received " + std::to_string(x.received.size()) +
                        " floats: expected " + std::to_string(ests_ * n) + " (" +
                        std::to_string(ests_) + " ESTs x " + std::to_string(n) +
                        "); do all ranks run the same model and train.ests?");
  }
  torch::NoGradGuard no_grad;
  x.folded.resize(static_cast<std::size_t>(n));
  torch::Tensor sum = FlatView(x.folded.data(), n);
  sum.copy_(FlatView(x.received.data(), n));
  for (std::int64_t k = 1; k < ests_; ++k) sum.add_(FlatView(x.received.data() + k * n, n));
  sum.div_(static_cast<double>(ests_));
  std::vector<std::int64_t> counts;
  world.AllGather(x.folded, counts, x.gathered);
  if (static_cast<std::int64_t>(x.gathered.size()) != numel_) {
    throw TrainingError("gradient exchange: gathered " + std::to_string(x.gathered.size()) +
                        " folded floats: expected " + std::to_string(numel_));
  }
  InstallGradients(x.gathered.data());
  ResetMarks();
}

void GradientStash::InstallGradients(const float* flat) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor value =
        FlatView(const_cast<float*>(flat) + offsets_[i], params_[i].numel()).view_as(params_[i]);
    // A fresh gradient must own its memory: `flat` is the caller's buffer.
    AssignGradient(params_[i], params_[i].grad().defined() ? value : value.clone());
  }
}

void GradientStash::ReduceMeanIntoGradients() {
  RequireCaptured({0, ests_});
  if (device_slots()) {
    FoldDeviceSlotsIntoGradients();
    return;
  }
  FoldIntoGradients(flat_.data(), ests_);
}

void GradientStash::ReduceMeanRankOrder(Communicator& world, EstRange hosted) {
  RequireHostSlots("d0's rank-order fold");
  RequireCaptured(hosted);
  torch::NoGradGuard no_grad;
  // The hosted slots folded in id order into .grad, as the running fold would have left them.
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const std::int64_t n = params_[i].numel();
    torch::Tensor sum = FlatView(Slot(hosted.begin) + offsets_[i], n).clone();
    for (std::int64_t est = hosted.begin + 1; est < hosted.end; ++est) {
      sum.add_(FlatView(Slot(est) + offsets_[i], n));
    }
    params_[i].mutable_grad() = sum.view_as(params_[i]).to(params_[i].device());
  }
  accumulated_ = hosted;
  ReduceAccumulatedRankOrder(world, hosted);
}

void GradientStash::BeginAccumulation(std::int64_t est_id, bool first) {
  if (first) {
    for (torch::Tensor& param : params_) param.mutable_grad().reset();
    accumulated_ = {est_id, est_id};
  } else if (est_id != accumulated_.end || accumulated_.size() == 0) {
    throw TrainingError("gradient fold: EST " + std::to_string(est_id) +
                        " out of order after ESTs " + ToString(accumulated_));
  }
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const torch::Tensor& grad = params_[i].grad();
    grad_impl_[i] = grad.defined() ? grad.unsafeGetTensorImpl() : nullptr;
    grad_version_[i] = grad.defined() ? static_cast<std::int64_t>(grad._version()) : -1;
  }
}

void GradientStash::EndAccumulation(std::int64_t est_id) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor& param = params_[i];
    const torch::Tensor& grad = param.grad();
    if (!grad.defined()) {
      param.mutable_grad() = torch::zeros_like(param);
    } else if (grad.unsafeGetTensorImpl() == grad_impl_[i] &&
               static_cast<std::int64_t>(grad._version()) == grad_version_[i]) {
      param.mutable_grad().add_(torch::zeros_like(param));  // untouched: the slot fold's + 0
    }
  }
  accumulated_.end = est_id + 1;
}

void GradientStash::ReduceAccumulatedMean() {
  RequireAccumulated({0, ests_});
  // x / 1 == x exactly, and one EST always means W = 1 (no slot fold to agree with): skip a
  // pass over every gradient.
  if (ests_ > 1) {
    torch::NoGradGuard no_grad;
    for (torch::Tensor& param : params_) param.mutable_grad().div_(static_cast<double>(ests_));
  }
  ResetMarks();
}

void GradientStash::ReduceAccumulatedRankOrder(Communicator& world, EstRange hosted) {
  RequireAccumulated(hosted);
  std::vector<float> partial(static_cast<std::size_t>(numel_));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const torch::Tensor values = HostValues(params_[i].grad());
    std::memcpy(partial.data() + offsets_[i], values.data_ptr<float>(),
                static_cast<std::size_t>(values.numel()) * sizeof(float));
  }
  std::vector<std::int64_t> counts;
  std::vector<float> all = world.AllGather(partial, counts);
  if (static_cast<std::int64_t>(all.size()) != world.size() * numel_) {
    throw TrainingError("gradient exchange (d0): gathered " + std::to_string(all.size()) +
                        " floats: expected " + std::to_string(world.size() * numel_));
  }
  FoldIntoGradients(all.data(), world.size());
}

std::span<const float> GradientStash::CapturedSlot(std::int64_t est_id, std::int64_t begin,
                                                   std::int64_t end) const {
  RequireHostSlots("ZeRO's shard exchange");
  RequireCaptured({est_id, est_id + 1});
  return {flat_.data() + est_id * numel_ + begin, static_cast<std::size_t>(end - begin)};
}

// --- Device slots: the slots on the GPU, NCCL's all-gather and the slot fold kernel. All of it
// is enqueued on the legacy default stream, where LibTorch's default-stream kernels run, so it
// is ordered after the backward that made the gradients and before the optimizer's step.

#ifdef ELASTIC_HAVE_NCCL
void GradientStash::CaptureOnDevice(std::int64_t est_id) {
  torch::NoGradGuard no_grad;
  if (!device_flat_.defined()) {
    device_flat_ = torch::empty({ests_ * numel_}, params_.front().options().dtype(torch::kFloat32));
  }
  torch::Tensor slot = device_flat_.narrow(0, est_id * numel_, numel_);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor out = slot.narrow(0, offsets_[i], params_[i].numel());
    const torch::Tensor& grad = params_[i].grad();
    if (grad.defined()) {
      out.copy_(grad.detach().reshape({-1}));  // device to device: the bits move unchanged
    } else {
      out.zero_();  // +0, as the host slot's memset
    }
  }
  captured_[static_cast<std::size_t>(est_id)] = true;
}

void GradientStash::ExchangeDeviceSlots(EstRange hosted) {
  const auto rank = static_cast<std::size_t>(nccl_->rank());
  std::vector<std::int64_t> counts;
  std::int64_t before = 0;  // slots of the lower ranks: where this rank's block must start
  for (std::size_t r = 0; r < slots_per_rank_.size(); ++r) {
    if (r < rank) before += slots_per_rank_[r];
    counts.push_back(slots_per_rank_[r] * numel_);
  }
  if (before != hosted.begin || slots_per_rank_[rank] != hosted.size()) {
    throw TrainingError("gradient exchange (NCCL): rank " + std::to_string(rank) +
                        " hosts ESTs " + ToString(hosted) + ", not its block of the EST slots");
  }
  float* slots = device_flat_.data_ptr<float>();
  nccl_->AllGatherV(slots + hosted.begin * numel_, slots, counts);  // in place, fixed slots
  std::fill(captured_.begin(), captured_.end(), true);
}

void GradientStash::FoldDeviceSlotsIntoGradients() {
  torch::NoGradGuard no_grad;
  torch::Tensor folded = torch::empty({numel_}, device_flat_.options());
  // The host fold divides by the double E, which LibTorch rounds to a float operand: the same.
  SlotFoldOnDevice(device_flat_.data_ptr<float>(), ests_, numel_, static_cast<float>(ests_),
                   folded.data_ptr<float>(), nullptr);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor value = folded.narrow(0, offsets_[i], params_[i].numel()).view_as(params_[i]);
    if (params_[i].grad().defined()) {
      params_[i].mutable_grad().copy_(value);
    } else {
      params_[i].mutable_grad() = value.clone();  // its own storage, as the host path's
    }
  }
  ResetMarks();
}
#else
// Unreachable: UseDeviceSlots throws in a build without NCCL, so device_slots() stays false.
void GradientStash::CaptureOnDevice(std::int64_t) {
  throw std::logic_error("GradientStash: device slots in a build without NCCL");
}
void GradientStash::ExchangeDeviceSlots(EstRange) {
  throw std::logic_error("GradientStash: device slots in a build without NCCL");
}
void GradientStash::FoldDeviceSlotsIntoGradients() {
  throw std::logic_error("GradientStash: device slots in a build without NCCL");
}
#endif

torch::Tensor GradientStash::DeviceSlot(std::int64_t est_id) const {
  RequireCaptured({est_id, est_id + 1});
  return device_flat_.narrow(0, est_id * numel_, numel_);
}

std::string GradientStash::BucketMap() const {
  std::string map;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    map += names_[i] + " " + std::to_string(offsets_[i]) + " " +
           std::to_string(params_[i].numel()) + "\n";
  }
  return map;
}

}  // namespace elastic::agent
