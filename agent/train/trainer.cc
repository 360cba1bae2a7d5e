// Trainer: the model, the plan's step and update, the loss gather and the step count.
#include "agent/train/trainer.h"

#include <ATen/Version.h>
#include <malloc.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/torch.h>

#include <cctype>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <mutex>

#include "agent/common/errors.h"
#ifdef ELASTIC_HAVE_NCCL
#include "agent/comm/nccl_communicator.h"
#endif
#include "agent/data/char_dataset.h"
#include "agent/est/device.h"
#include "agent/est/est_buffers.h"
#include "agent/est/est_placement.h"
#include "agent/model/registry.h"
#include "agent/plan/burst_placement.h"
#include "agent/plan/execution_plan.h"
#include "agent/plan/sgd_step.h"
#include "agent/train/lr_schedule.h"
#include "agent/train/params_digest.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

std::vector<EstContext> MakeHostedEsts(const JobConfig& config, EstRange hosted) {
  std::vector<EstContext> ests;
  for (std::int64_t id = hosted.begin; id < hosted.end; ++id) {
    ests.push_back(MakeEstContext(static_cast<std::uint64_t>(config.train.seed), id));
  }
  return ests;
}

// Returns `data` after checking the config can train on it (before SampleOrder relies on it).
Dataset CheckRunnable(const JobConfig& config, Dataset data) {
  if (config.train.global_batch > data.size()) {
    throw ConfigError("train.global_batch: " + std::to_string(config.train.global_batch) +
                      " is larger than the " + std::to_string(data.size()) +
                      " training samples in " + config.data.path);
  }
  return data;
}

// The plans that move activations or parameter chunks between ranks (pp, tp, burst) serialise
// CPU tensors (tensor_message.h): on a GPU they are not implemented.
void RequireHostOnlyPlansOnCpu(const JobConfig& config, const perf::ExecutionPlan& plan,
                               int ranks) {
  if (config.train.device == ComputeDevice::kCpu) return;
  const Plan word = RunPlanWord(config);
  if (plan.pp > 1 || plan.tp > 1 || word == Plan::kTp || RunsBurstPlan(config, ranks)) {
    throw ConfigError("train.device: \"cuda\" runs the plans dp, ga, gc, zero-dp and "
                      "zero-offload: plan \"" + std::string(ToString(perf::Family(plan))) +
                      "\" on " + std::to_string(ranks) +
                      " ranks runs on \"cpu\" only (its activation exchange is host-side)");
  }
}

// data.augment = "flip" mirrors images: float inputs [N, C, H, W] or [N, H, W].
Dataset RequireFlippable(const JobConfig& config, Dataset data) {
  if (config.data.augment != Augment::kFlip) return data;
  const SampleLayout& layout = data.shards->layout();
  if (layout.input_dtype != torch::kFloat32 || layout.input_shape.size() < 2) {
    throw ConfigError("data.augment: \"flip\" mirrors float32 images [N, C, H, W], but the "
                      "shards in " + config.data.path + " hold " +
                      std::string(c10::toString(layout.input_dtype)) + " inputs of " +
                      std::to_string(layout.input_shape.size()) +
                      " dimensions per sample: expected \"none\"");
  }
  return data;
}

// A user's module is run once on two training samples, in eval mode (no dropout draw, no
// buffer update), so a wrong output shape is refused before step 1 with the shape it gave.
void ProbeOutputShape(const JobConfig& config, Model& model, const Dataset& data,
                      torch::Device device) {
  if (config.model.torchscript.empty()) return;
  torch::NoGradGuard no_grad;
  model.eval();
  const torch::Tensor logits =
      model.forward(LeadingInputs(data, std::min<std::int64_t>(2, data.size())).to(device));
  model.train();
  if (!data.shards) return;
  // Model::forward's layout: [N, C] for class targets [N], [N, V, T] for token targets [N, T].
  const std::vector<std::int64_t>& target = data.shards->layout().target_shape;
  const bool tokens = !target.empty();
  if ((tokens && (logits.dim() != 3 || logits.size(2) != target[0])) ||
      (!tokens && logits.dim() != 2)) {
    throw ConfigError("model.torchscript \"" + config.model.torchscript + "\": the module's " +
                      std::to_string(logits.dim()) + "-dimensional logits do not fit the targets " +
                      (tokens ? "[N, " + std::to_string(target[0]) + "]" : std::string("[N]")) +
                      " of " + config.data.path + ": expected logits " +
                      (tokens ? "[N, " + std::to_string(target[0]) + ", V]" : "[N, C]"));
  }
}

std::unique_ptr<BatchQueue> MakeBatchQueue(const JobConfig& config, const Dataset& data,
                                           EstRange hosted) {
  const auto seed = static_cast<std::uint64_t>(config.train.seed);
  return std::make_unique<BatchQueue>(
      data, SampleOrder(data.size(), config.train.global_batch, seed), seed, config.est_batch(),
      hosted, BatchQueue::Options{config.data.workers, config.data.prefetch, config.data.augment});
}

EstRange HostedEstsOf(const JobConfig& config, const perf::ExecutionPlan& plan, int rank,
                      const std::vector<double>& speeds) {
  const int ranks = static_cast<int>(speeds.size());
  if (RunsBurstPlan(config, ranks)) {
    return BurstEstsOfRank(config.train.ests, config.train.burst_workers.front(), rank);
  }
  return HostedEstsUnder(plan, config.train.ests, rank, speeds);
}

// Collective: every rank's device speed, in rank order. A rank's own is ELASTIC_DEVICE_SPEED
// (set per node, e.g. by a TaskProlog, on nodes of different speed), 1 without it.
std::vector<double> GatherDeviceSpeeds(Communicator& world) {
  const float mine = static_cast<float>(DeviceSpeedFromEnv(ProcessEnv()));
  if (world.size() == 1) return {mine};
  std::vector<std::int64_t> counts;
  const std::vector<float> all = world.AllGather(std::span<const float>(&mine, 1), counts);
  return std::vector<double>(all.begin(), all.end());
}

// The slot exchange (d1/d2 on W > 1 ranks) of a CUDA job's replicated update (dp, ga, gc) and of
// zero-dp runs on the GPUs over NCCL when the build has it: the stash's device slots, the host
// path's bits (gradient_stash.h, sharded_update.cc). zero-offload keeps its host exchange (its
// update runs on the host anyway). Null (the host exchange over MPI) for CPU jobs, builds
// without NCCL and ranks sharing a GPU. Collective: every rank reaches the same decision from the
// same config.
std::shared_ptr<NcclCommunicator> MakeDeviceExchange(const JobConfig& config,
                                                     const perf::ExecutionPlan& plan,
                                                     const std::vector<double>& speeds,
                                                     Communicator& world, torch::Device device,
                                                     bool fold_locally, GradientStash& stash) {
  const bool on_device_update = plan.pp <= 1 && plan.tp <= 1 && !plan.offload;
  if (!device.is_cuda() || world.size() == 1 || fold_locally || !on_device_update) return nullptr;
#ifdef ELASTIC_HAVE_NCCL
  std::string why_not;
  std::shared_ptr<NcclCommunicator> nccl = MakeNcclCommunicator(world, device.index(), &why_not);
  if (!nccl) {
    if (world.rank() == 0) {
      std::cerr << "elastic-agent: gradient exchange over MPI: " << why_not << "\n";
    }
    return nullptr;
  }
  std::vector<std::int64_t> slots_per_rank;
  for (int r = 0; r < world.size(); ++r) {
    slots_per_rank.push_back(HostedEstsOf(config, plan, r, speeds).size());
  }
  stash.UseDeviceSlots(*nccl, std::move(slots_per_rank));
  if (world.rank() == 0) std::cerr << "elastic-agent: gradient exchange over NCCL on the GPUs\n";
  return nccl;
#else
  (void)config;
  (void)speeds;
  (void)stash;
  return nullptr;
#endif
}

std::vector<std::string> ParameterNames(const Model& model) {
  std::vector<std::string> names;
  for (const auto& item : model.named_parameters()) names.push_back(item.key());
  return names;
}

}  // namespace

std::shared_ptr<Model> MakeSeededModel(const JobConfig& config, torch::Device device) {
  ConfigureTorchRuntime(config);
  torch::manual_seed(static_cast<std::uint64_t>(config.train.seed));
  std::shared_ptr<Model> model = MakeJobModel(config);
  if (!device.is_cpu()) model->to(device);
  return model;
}

std::string CpuKernelIsa() {
  // LibTorch does not export its capability getter; show_config() reports the same value as
  // "CPU capability usage: AVX2" (computed once, from ATEN_CPU_CAPABILITY and the CPU).
  const std::string config = at::show_config();
  const std::string key = "CPU capability usage: ";
  const std::size_t at = config.find(key);
  if (at == std::string::npos) return "unknown";
  const std::size_t begin = at + key.size();
  std::string isa = config.substr(begin, config.find('\n', begin) - begin);
  for (char& c : isa) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return isa == "no avx" ? "default" : isa;
}

namespace {

// glibc hands freed memory above its trim threshold back to the kernel and serves blocks above
// its self-adjusting mmap threshold with fresh mappings. A training step frees and reallocates
// the same megabyte-sized activations every micro-batch, so depending on where small blocks
// happened to land in the heap, each step page-faulted tens of MB back in: up to ~12,000 faults
// and +40 % step time for fmnist_cnn at E = 8, on the EST side or the plain loop's alike
// (est_bench, docs/consistency.md). Fixed thresholds keep that memory in the process. Timing
// only: no bit depends on where memory comes from.
void KeepFreedMemoryMapped() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum; setting it stops the adjustment
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  });
}

}  // namespace

void ConfigureTorchRuntime(const JobConfig& config) {
  KeepFreedMemoryMapped();
  const int threads = static_cast<int>(config.train.threads);
  at::set_num_threads(threads);
  // LibTorch allows setting the inter-op pool once per process, before it starts. Eager CPU
  // training never uses that pool, so results do not depend on it: set it once, and if a second
  // training in the same process (tests) finds it fixed, leave it.
  static std::once_flag interop_once;
  std::call_once(interop_once, [threads] {
    try {
      at::set_num_interop_threads(threads);
    } catch (const c10::Error&) {
    }
  });
  // On a GPU, d1/d2 refuse (LibTorch throws, naming the operation) any kernel without a
  // deterministic implementation; statistical and d0 promise no bits, so such a kernel warns.
  const bool cuda = config.train.device == ComputeDevice::kCuda;
  const bool bitwise = config.train.determinism == Determinism::kD1 ||
                       config.train.determinism == Determinism::kD2;
  at::globalContext().setDeterministicAlgorithms(/*enabled=*/true,
                                                 /*warn_only=*/cuda && !bitwise);
  // TorchScript modules (model.torchscript) run in the interpreter, op by op, under eager
  // autograd. With the graph optimizer on, a method's first call is a profiling run and later
  // ones run optimized graphs whose backward is the JIT's symbolic autodiff: another formula for
  // some ops, so a resumed process (whose first call is a profiling run again) would leave the
  // bits of the uninterrupted one.
  torch::jit::setGraphExecutorOptimize(false);
}

Trainer::Trainer(const JobConfig& config, Dataset data)
    : Trainer(config, std::move(data), nullptr, MakeSingleProcessCommunicator()) {}

Trainer::Trainer(const JobConfig& config, Dataset data, Communicator& world)
    : Trainer(config, std::move(data), &world, nullptr) {}

Trainer::Trainer(const JobConfig& config, Dataset data, Communicator* world,
                 std::unique_ptr<Communicator> owned_world)
    : config_(config),
      owned_world_(std::move(owned_world)),
      world_(world != nullptr ? world : owned_world_.get()),
      device_(TrainingDevice(config)),
      plan_(ResolveExecutionPlan(config, world_->size())),
      speeds_(GatherDeviceSpeeds(*world_)),
      hosted_(HostedEstsOf(config, plan_, world_->rank(), speeds_)),
      data_(CheckRunnable(config, std::move(data))),
      fold_locally_(world_->size() == 1 || config.train.determinism == Determinism::kD0 ||
                    plan_.pp > 1 || plan_.tp > 1 || RunsBurstPlan(config, world_->size())),
      queue_(MakeBatchQueue(config, data_, hosted_)),
      model_(MakeSeededModel(config, device_)),
      ests_(MakeHostedEsts(config, hosted_)),
      stash_(model_->parameters(), ParameterNames(*model_), config.train.ests) {
  RequireHostOnlyPlansOnCpu(config, plan_, world_->size());
  ProbeOutputShape(config, *model_, data_, device_);
  AdoptModelBuffers(*model_, ests_);
  model_->train();
  optimizer_ = std::make_unique<torch::optim::SGD>(model_->parameters(),
                                                   torch::optim::SGDOptions(config.train.lr)
                                                       .momentum(config.train.momentum)
                                                       .weight_decay(config.train.weight_decay));
  // After the optimizer, before the update (MakePlanStep says why), as the plans always ran.
  PlanStepSetup setup = MakePlanStep(
      PlanStepContext{config_, plan_, *world_, device_, *model_, stash_, hosted_, fold_locally_});
  plan_step_ = std::move(setup.step);
  update_ = MakeParameterUpdate(
      plan_, UpdateContext{config_, *world_, hosted_, fold_locally_, stash_, *optimizer_,
                           model_->parameters(), std::move(setup.update_owners),
                           model_->TensorParallelParameters()});
  nccl_ = MakeDeviceExchange(config_, plan_, speeds_, *world_, device_, fold_locally_, stash_);
}

double Trainer::RunStep() {
  auto batch = [this](std::int64_t est) { return queue_->Next(step_, est); };
  std::vector<float> hosted_losses = plan_step_->Run(batch, ests_);
  // Between steps the model's buffers are the first hosted EST's (rank 0: EST 0's).
  if (!ests_.empty()) LoadEstBuffers(*model_, ests_.front());
  if (!ReportsHostedEsts()) hosted_losses.clear();  // a TP group's losses come from rank 0
  // Every EST's loss on every rank, in EST-id order (contiguous blocks in rank order; under pp
  // the last stage holds all of them, under burst the last block's ranks).
  std::vector<std::int64_t> counts;
  const std::vector<float> losses = world_->AllGather(hosted_losses, counts);
  double loss_sum = 0;
  for (float est_loss : losses) loss_sum += est_loss;
  const double loss = loss_sum / static_cast<double>(config_.train.ests);
  // Stop before a diverged update reaches the parameters: every later step would be NaN too.
  if (!std::isfinite(loss)) {
    throw TrainingError("step " + std::to_string(step_ + 1) + ": loss is " + std::to_string(loss) +
                        ": training diverged (try a smaller train.lr)");
  }
  SetLearningRate(*optimizer_, LearningRateAt(config_.train, step_));
  update_->Step();
  SynchronizeDevice(device_);
  ++step_;
  last_loss_ = loss;
  return loss;
}

Dataset LoadTrainingSet(const JobConfig& config) {
  switch (config.data.format) {
    case DatasetKind::kTextCorpus:
      return LoadTextCorpus(config.data.path);
    case DatasetKind::kTensors:
      return RequireFlippable(config,
                              OpenTensorShards(config.data.path, "train", config.data.cache_mb));
    case DatasetKind::kFashionMnist:
      break;
  }
  return LoadFashionMnist(config.data.path, Split::kTrain);
}

Dataset LoadTestSet(const JobConfig& config) {
  switch (config.data.format) {
    case DatasetKind::kTensors:
      return OpenTensorShards(config.data.path, "test", config.data.cache_mb);
    case DatasetKind::kFashionMnist:
      return LoadFashionMnist(config.data.path, Split::kTest);
    case DatasetKind::kTextCorpus:
      break;
  }
  throw ConfigError("data.format: \"text\" has no test split: expected \"fashion-mnist\" or "
                    "\"tensors\" (test*.pt shards) to evaluate");
}

void Trainer::SetIdleFiller(multiplex::IdleFiller* filler) {
  plan_step_->SetIdleFiller(filler);
}

std::string Trainer::ParamsSha256() const { return agent::ParamsSha256(*model_); }

std::string Trainer::ReplicaSha256() const { return ParametersOnlySha256(*model_); }

}  // namespace elastic::agent
