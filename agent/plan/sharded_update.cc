// ShardedUpdate: ZeRO stage 2 (Rubick §2.1 "ZeRO-DP"/"ZeRO-Offload", §3) over the EST runtime. Each
// rank owns a run of whole parameters (parameter_shards.h). A step:
//  1. reduce-scatter: every rank sends, for each shard, its hosted ESTs' pieces of that shard to
//     the shard's owner (Communicator::AllToAll moves bytes only). The owner receives all E
//     pieces in EST-id order (hosted blocks are contiguous and in rank order) and folds them
//     ((g_0 + g_1) + ...) / E with the tensor operations GradientStash uses for the full
//     vector: the same values in the same association, so the same bits as the replicated path;
//  2. the owner keeps the momentum of its parameters only and updates them (SgdStep, the
//     operations torch::optim::SGD runs on a replica); zero-offload runs this on c host threads;
//  3. all-gather: every rank receives every owner's updated parameters unchanged.
// On a GPU (train.device = "cuda") with NCCL (the stash's device slots, gradient_stash.h), zero-dp
// runs all three on the GPUs: the reduce-scatter is NCCL's all-to-all of the device slots' shard
// pieces, the fold slot_fold.cu's kernel (the same adds and division, so the same bits) and the
// parameter all-gather NCCL's, in place. Otherwise the folds and the exchange stay in host
// memory and only the result moves: zero-dp installs the folded shard as the owned gradients on
// the device and updates there; zero-offload hands it to its OffloadMirror (offload_mirror.h: the
// fp32 master copy and momentum in pinned host memory, ZeRO-Offload's transfer path).
#include "agent/plan/sharded_update.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <numeric>
#include <sstream>
#include <stdexcept>

#include "agent/common/errors.h"
#include "agent/plan/host_threads.h"
#include "agent/plan/offload_mirror.h"
#include "agent/plan/parameter_shards.h"
#include "agent/plan/sgd_step.h"
#include "agent/est/device.h"
#include "common/toml_reader.h"
#ifdef ELASTIC_HAVE_NCCL
#include "agent/comm/nccl_communicator.h"
#include "agent/comm/slot_fold.h"
#endif

namespace elastic::agent {
namespace {

torch::Tensor FlatView(const float* data, std::int64_t numel) {
  return torch::from_blob(const_cast<float*>(data), {numel}, torch::kFloat32);
}

// The key LibTorch's optimizers file a parameter's state under: its TensorImpl's address, as a
// string before LibTorch 2.2 and as the pointer since.
auto StateKey(const torch::Tensor& param) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  return static_cast<void*>(param.unsafeGetTensorImpl());
#else
  std::ostringstream key;  // what c10::guts::to_string(pointer) wrote
  key << param.unsafeGetTensorImpl();
  return key.str();
#endif
}

class ShardedUpdate final : public ParameterUpdate {
 public:
  ShardedUpdate(const perf::ExecutionPlan& plan, const UpdateContext& context)
      : c_(context),
        momentum_(context.params.size()),
        pipelined_(plan.pp > 1),
        device_(context.params.empty() ? torch::Device(torch::kCPU)
                                       : context.params.front().device()) {
    std::vector<std::int64_t> numels;
    for (const torch::Tensor& param : c_.params) {
      offsets_.push_back(total_);
      total_ += param.numel();
      numels.push_back(param.numel());
    }
    shards_ = c_.owners.empty() ? SplitParameters(numels, c_.world.size()) : c_.owners;
    mine_ = shards_[static_cast<std::size_t>(c_.world.rank())];
    if (plan.offload) {
      host_threads_ = static_cast<std::size_t>(plan.cpu_threads);
      host_parts_ =
          SplitParameters(std::span(numels).subspan(mine_.first, mine_.last - mine_.first),
                          static_cast<int>(host_threads_));
    }
    if (plan.offload && !device_.is_cpu()) {
      mirror_ = std::make_unique<OffloadMirror>(c_.params, mine_);
    }
  }

  void Step() override {
    if (c_.world.size() == 1 || pipelined_) {
      // One shard, or a pipeline stage: this rank folded all E ESTs in id order for (at least)
      // its own parameters.
      c_.stash.ReduceAccumulatedMean();
      if (pipelined_) ReleaseOthersGradients();
    } else if (c_.stash.device_slots()) {
      ReduceScatterOnDevice();
    } else {
      ReduceScatter();
    }
    UpdateOwned();
    if (c_.world.size() == 1) return;
    if (c_.stash.device_slots()) {
      AllGatherParametersOnDevice();
    } else {
      AllGatherParameters();
    }
  }

  std::string OptimizerArchive(bool primary) override;
  void AdoptLoadedOptimizerState() override;

 private:
  bool Owns(std::size_t param) const { return param >= mine_.first && param < mine_.last; }
  void ReleaseOthersGradients() {
    for (std::size_t i = 0; i < c_.params.size(); ++i) {
      if (!Owns(i)) c_.params[i].mutable_grad().reset();
    }
  }
  void ReduceScatter();
  void UpdateOwned();
  void AllGatherParameters();
  // The same over NCCL on the GPU (only with ELASTIC_HAVE_NCCL and the stash's device slots).
  void ReduceScatterOnDevice();
  void AllGatherParametersOnDevice();

  UpdateContext c_;
  std::vector<std::int64_t> offsets_;  // of each parameter in the flat vector
  std::int64_t total_ = 0;
  std::vector<ParameterShard> shards_;  // one per rank
  ParameterShard mine_;
  std::vector<torch::Tensor> momentum_;     // defined only for owned parameters after a step
  std::size_t host_threads_ = 0;            // zero-offload's c; 0 = update on the training thread
  std::vector<ParameterShard> host_parts_;  // owned parameters split among the host threads
  bool pipelined_;  // pp: the stage folded its gradients itself; no reduce-scatter
  torch::Device device_;
  std::unique_ptr<OffloadMirror> mirror_;  // zero-offload on a GPU: the update runs there
  // The host exchange's buffers, kept from step to step (GradientStash::ExchangeBuffers says why).
  struct ExchangeBuffers {
    std::vector<float> send;      // ReduceScatter: this rank's ESTs' pieces of every shard
    std::vector<float> received;  // every EST's piece of this rank's shard
    std::vector<float> mine;      // AllGatherParameters: this rank's updated shard
    std::vector<float> all;       // every rank's shard: all parameters
  };
  ExchangeBuffers exchange_;
  // The fold of parameter i's shard (a host tensor) as what the update reads: the mirror's for
  // zero-offload on a GPU, else the parameter's gradient on its device.
  void SetOwnedGradient(std::size_t i, const torch::Tensor& sum);
};

void ShardedUpdate::SetOwnedGradient(std::size_t i, const torch::Tensor& sum) {
  torch::Tensor& param = c_.params[i];
  if (mirror_) {
    mirror_->SetHostGradient(i, sum);
  } else if (param.grad().defined()) {
    param.mutable_grad().copy_(sum.view_as(param));
  } else {
    param.mutable_grad() = sum.view_as(param).to(param.device());
  }
}

void ShardedUpdate::ReduceScatter() {
  std::vector<float>& send = exchange_.send;
  send.clear();  // keeps its memory: the inserts below refill it without new pages
  std::vector<std::int64_t> send_counts;
  for (const ParameterShard& shard : shards_) {
    for (std::int64_t est = c_.hosted.begin; est < c_.hosted.end; ++est) {
      std::span<const float> piece = c_.stash.CapturedSlot(est, shard.begin, shard.end);
      send.insert(send.end(), piece.begin(), piece.end());
    }
    send_counts.push_back(c_.hosted.size() * shard.size());
  }
  std::vector<std::int64_t> recv_counts;
  const std::vector<float>& received = exchange_.received;
  c_.world.AllToAll(send, send_counts, recv_counts, exchange_.received);
  c_.stash.ReleaseSlots();
  const std::int64_t ests = c_.config.train.ests;
  if (static_cast<std::int64_t>(received.size()) != ests * mine_.size()) {
    throw TrainingError("gradient reduce-scatter: received " + std::to_string(received.size()) +
                        " floats: expected " + std::to_string(ests) + " ESTs x " +
                        std::to_string(mine_.size()) + " (this rank's shard)");
  }
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < c_.params.size(); ++i) {
    torch::Tensor& param = c_.params[i];
    if (!Owns(i)) {
      param.mutable_grad().reset();  // ZeRO-2: only the owner keeps a reduced gradient
      continue;
    }
    const std::int64_t at = offsets_[i] - mine_.begin;
    const std::int64_t n = param.numel();
    // The fold of GradientStash::FoldIntoGradients, on this shard's pieces.
    torch::Tensor sum = FlatView(received.data() + at, n).clone();
    for (std::int64_t k = 1; k < ests; ++k) {
      sum.add_(FlatView(received.data() + k * mine_.size() + at, n));
    }
    sum.div_(static_cast<double>(ests));
    SetOwnedGradient(i, sum);
  }
}

#ifdef ELASTIC_HAVE_NCCL
// ReduceScatter on the GPU: this rank's hosted slots cut by shard (for owner 0, then 1, ...),
// NCCL's all-to-all, and the fold of the received E pieces of this rank's shard, which arrive
// in EST order (hosted blocks are contiguous and in rank order) as on the host.
void ShardedUpdate::ReduceScatterOnDevice() {
  torch::NoGradGuard no_grad;
  const std::int64_t ests = c_.config.train.ests;
  const torch::TensorOptions options = c_.stash.DeviceSlot(c_.hosted.begin).options();
  torch::Tensor send = torch::empty({c_.hosted.size() * total_}, options);
  std::vector<std::int64_t> send_counts;
  std::vector<std::int64_t> recv_counts;
  std::int64_t at = 0;
  for (std::size_t q = 0; q < shards_.size(); ++q) {
    const ParameterShard& shard = shards_[q];
    for (std::int64_t est = c_.hosted.begin; est < c_.hosted.end; ++est) {
      send.narrow(0, at, shard.size())
          .copy_(c_.stash.DeviceSlot(est).narrow(0, shard.begin, shard.size()));
      at += shard.size();
    }
    send_counts.push_back(c_.hosted.size() * shard.size());
    recv_counts.push_back(c_.stash.slots_per_rank()[q] * mine_.size());
  }
  torch::Tensor received = torch::empty({ests * mine_.size()}, options);
  c_.stash.nccl().AllToAllV(send.data_ptr<float>(), send_counts, received.data_ptr<float>(),
                            recv_counts);
  c_.stash.ReleaseSlots();
  torch::Tensor folded = torch::empty({mine_.size()}, options);
  SlotFoldOnDevice(received.data_ptr<float>(), ests, mine_.size(), static_cast<float>(ests),
                   folded.data_ptr<float>(), nullptr);
  for (std::size_t i = 0; i < c_.params.size(); ++i) {
    if (!Owns(i)) {
      c_.params[i].mutable_grad().reset();
      continue;
    }
    SetOwnedGradient(i, folded.narrow(0, offsets_[i] - mine_.begin, c_.params[i].numel()));
  }
}

// AllGatherParameters on the GPU: the owners' updated parameters into one flat device vector,
// in place (shards are runs of the flat vector in rank order), then into the other parameters.
void ShardedUpdate::AllGatherParametersOnDevice() {
  torch::NoGradGuard no_grad;
  torch::Tensor flat = torch::empty({total_}, c_.params.front().options());
  std::vector<std::int64_t> counts;
  for (const ParameterShard& shard : shards_) {
    if (shard.begin != std::accumulate(counts.begin(), counts.end(), std::int64_t{0})) {
      throw TrainingError("parameter all-gather (NCCL): the shards are not runs of the flat "
                          "parameter vector in rank order");
    }
    counts.push_back(shard.size());
  }
  for (std::size_t i = mine_.first; i < mine_.last; ++i) {
    flat.narrow(0, offsets_[i], c_.params[i].numel()).copy_(c_.params[i].detach().reshape({-1}));
  }
  float* data = flat.data_ptr<float>();
  c_.stash.nccl().AllGatherV(data + mine_.begin, data, counts);
  for (std::size_t i = 0; i < c_.params.size(); ++i) {
    if (Owns(i)) continue;
    torch::Tensor& param = c_.params[i];
    param.detach().copy_(flat.narrow(0, offsets_[i], param.numel()).view_as(param));
  }
}
#else
// Unreachable: without NCCL the stash never has device slots.
void ShardedUpdate::ReduceScatterOnDevice() {
  throw std::logic_error("ShardedUpdate: device exchange in a build without NCCL");
}
void ShardedUpdate::AllGatherParametersOnDevice() {
  throw std::logic_error("ShardedUpdate: device exchange in a build without NCCL");
}
#endif

void ShardedUpdate::UpdateOwned() {
  // The step's rate (the trainer set it, lr_schedule.h) and weight decay, as the replicated
  // plans' SGD reads them.
  const SgdHyper hyper = HyperOf(c_.optimizer);
  if (mirror_) {
    mirror_->Step(host_parts_, host_threads_, hyper, momentum_);
    return;
  }
  auto update = [&](std::size_t i) { SgdStep(c_.params[i], momentum_[i], hyper); };
  if (host_threads_ == 0) {
    for (std::size_t i = mine_.first; i < mine_.last; ++i) update(i);
    return;
  }
  // Each host thread updates whole parameters of its own: the same per-tensor operations as on
  // the training thread (LibTorch gives every thread train.threads intra-op threads), so the
  // thread count c changes no bit.
  RunParts(host_parts_.size(), host_threads_, [&](std::size_t part) {
    for (std::size_t i = host_parts_[part].first; i < host_parts_[part].last; ++i) {
      update(mine_.first + i);
    }
  });
}

void ShardedUpdate::AllGatherParameters() {
  std::vector<float>& mine = exchange_.mine;
  mine.clear();
  mine.reserve(static_cast<std::size_t>(mine_.size()));
  for (std::size_t i = mine_.first; i < mine_.last; ++i) {
    const torch::Tensor values =
        mirror_ ? mirror_->master(i) : c_.params[i].detach().to(torch::kCPU).contiguous();
    const float* data = values.data_ptr<float>();
    mine.insert(mine.end(), data, data + values.numel());
  }
  std::vector<std::int64_t> counts;
  const std::vector<float>& all = exchange_.all;
  c_.world.AllGather(mine, counts, exchange_.all);
  if (static_cast<std::int64_t>(all.size()) != total_) {
    throw TrainingError("parameter all-gather: received " + std::to_string(all.size()) +
                        " floats: expected " + std::to_string(total_));
  }
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < c_.params.size(); ++i) {
    if (Owns(i)) continue;
    torch::Tensor& param = c_.params[i];
    param.detach().copy_(FlatView(all.data() + offsets_[i], param.numel()).view_as(param));
  }
}

// Every owner's momentum gathered (rank order = parameter order) and filed into the SGD's state
// on rank 0, saved in the replicated plan's format, then dropped again.
std::string ShardedUpdate::OptimizerArchive(bool primary) {
  std::vector<float> mine;
  for (std::size_t i = mine_.first; i < mine_.last; ++i) {
    if (!momentum_[i].defined()) continue;  // before the first step, or momentum = 0
    const torch::Tensor values = momentum_[i].to(torch::kCPU).contiguous();
    mine.insert(mine.end(), values.data_ptr<float>(), values.data_ptr<float>() + values.numel());
  }
  std::vector<std::int64_t> counts;
  const std::vector<float> all = c_.world.AllGather(mine, counts);
  if (!primary) return {};
  auto& state = c_.optimizer.state();
  state.clear();
  std::int64_t at = 0;
  for (std::size_t r = 0; r < shards_.size(); ++r) {
    if (counts[r] == 0) continue;
    if (counts[r] != shards_[r].size()) {
      throw TrainingError("optimizer state gather: rank " + std::to_string(r) + " sent " +
                          std::to_string(counts[r]) + " floats: expected its shard's " +
                          std::to_string(shards_[r].size()));
    }
    for (std::size_t i = shards_[r].first; i < shards_[r].last; ++i) {
      const torch::Tensor& param = c_.params[i];
      auto param_state = std::make_unique<torch::optim::SGDParamState>();
      param_state->momentum_buffer(FlatView(all.data() + at, param.numel()).view_as(param).clone());
      state[StateKey(param)] = std::move(param_state);
      at += param.numel();
    }
  }
  std::string bytes = SgdArchiveBytes(c_.optimizer);
  state.clear();
  return bytes;
}

void ShardedUpdate::AdoptLoadedOptimizerState() {
  auto& state = c_.optimizer.state();
  for (std::size_t i = mine_.first; i < mine_.last; ++i) {
    auto found = state.find(StateKey(c_.params[i]));
    momentum_[i] =
        found == state.end()
            ? torch::Tensor()
            : static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer();
    // Where the update runs: the host for zero-offload on a GPU, else the parameter's device.
    const torch::Device at = mirror_ ? torch::Device(torch::kCPU) : device_;
    if (momentum_[i].defined()) momentum_[i] = momentum_[i].to(at);
  }
  if (mirror_) mirror_->Invalidate();  // the checkpoint's parameters replace the master copy
  state.clear();  // this rank keeps only its shard's momentum
}

}  // namespace

std::unique_ptr<ParameterUpdate> MakeShardedUpdate(const perf::ExecutionPlan& plan,
                                                   const UpdateContext& context) {
  if (plan.pp == 1 && context.config.train.determinism == Determinism::kD0 &&
      context.world.size() > 1) {
    throw ConfigError("train.plan: plan \"" + std::string(ToString(perf::Family(plan))) +
                      "\" under determinism \"d0\" on more than one rank is not implemented: "
                      "expected determinism d1, d2 or statistical, or plan dp");
  }
  return std::make_unique<ShardedUpdate>(plan, context);
}

}  // namespace elastic::agent
