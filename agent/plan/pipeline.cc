// Pipeline: stage assignment, the 1F1B schedule and the messages between stages.
#include "agent/plan/pipeline.h"

#include <torch/torch.h>

#include <cstring>
#include <string>
#include <unordered_map>

#include "agent/common/errors.h"
#include "agent/model/model.h"
#include "agent/plan/tensor_message.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

constexpr const char* kWhat = "pipeline: a message between stages";

}  // namespace

StageBlocks BlocksOfStage(std::int64_t blocks, int stage, int stages) {
  return {blocks * stage / stages, blocks * (stage + 1) / stages};
}

std::vector<ParameterShard> StageShards(const Model& model, int stages) {
  const std::int64_t blocks = model.BlockCount();
  if (stages > blocks) {
    throw ConfigError("train.plan: plan \"pp\" on " + std::to_string(stages) +
                      " ranks: the model has " + std::to_string(blocks) +
                      " blocks: expected at most one stage per block");
  }
  std::unordered_map<const void*, std::size_t> index;
  std::vector<std::int64_t> offsets{0};
  const std::vector<torch::Tensor> params = model.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    index[params[i].unsafeGetTensorImpl()] = i;
    offsets.push_back(offsets.back() + params[i].numel());
  }
  std::vector<ParameterShard> shards;
  std::size_t next = 0;
  for (int s = 0; s < stages; ++s) {
    const StageBlocks range = BlocksOfStage(blocks, s, stages);
    const std::size_t first = next;
    for (std::int64_t b = range.first; b < range.last; ++b) {
      for (const torch::Tensor& param : model.BlockParameters(b)) {
        auto found = index.find(param.unsafeGetTensorImpl());
        if (found == index.end() || found->second != next) {
          throw ConfigError(
              "train.plan: plan \"pp\": the model's blocks do not use its "
              "parameters in named_parameters() order, one block after another");
        }
        ++next;
      }
    }
    shards.push_back({first, next, offsets[first], offsets[next]});
  }
  if (next != params.size()) {
    throw ConfigError("train.plan: plan \"pp\": some parameters belong to no block");
  }
  return shards;
}

Pipeline::Pipeline(Model& model, Communicator& world, GradientStash& stash, std::int64_t ests)
    : model_(model),
      world_(world),
      stash_(stash),
      ests_(ests),
      stage_(world.rank()),
      stages_(world.size()),
      blocks_(BlocksOfStage(model.BlockCount(), world.rank(), world.size())) {}

std::vector<float> Pipeline::Run(const BatchSource& batch, std::vector<EstContext>& ests) {
  in_flight_.assign(static_cast<std::size_t>(ests_), InFlight{});
  streams_.assign(static_cast<std::size_t>(ests_), EstContext{});
  losses_.assign(static_cast<std::size_t>(ests_), 0.0f);
  // 1F1B: stage s runs min(p - s - 1, E) forward passes ahead, then alternates one forward and
  // one backward, then drains the backward passes. Backward passes run in EST order.
  const std::int64_t warmup = std::min<std::int64_t>(stages_ - stage_ - 1, ests_);
  for (std::int64_t e = 0; e < warmup; ++e) Forward(e, batch, ests);
  for (std::int64_t e = warmup; e < ests_; ++e) {
    Forward(e, batch, ests);
    Backward(e - warmup);
  }
  for (std::int64_t e = ests_ - warmup; e < ests_; ++e) Backward(e);
  const bool last = stage_ == stages_ - 1;
  // The ESTs' streams end on the last stage; rank 0 keeps them between steps (checkpoints).
  if (stages_ > 1 && last) {
    std::vector<std::uint8_t> message;
    for (const EstContext& est : streams_) AppendTensor(message, est.rng_state);
    world_.Send(message, 0);
  } else if (stages_ > 1 && stage_ == 0) {
    MessageReader reader(world_.Receive(stages_ - 1), kWhat);
    for (EstContext& est : ests) est.rng_state = reader.NextTensor();
  }
  in_flight_.clear();
  return last ? losses_ : std::vector<float>{};
}

void Pipeline::Forward(std::int64_t est, const std::function<MiniBatch(std::int64_t)>& batch,
                       std::vector<EstContext>& ests) {
  InFlight& flight = in_flight_[static_cast<std::size_t>(est)];
  EstContext* context = nullptr;
  torch::Tensor targets;
  if (stage_ == 0) {
    MiniBatch mini = batch(est);
    flight.input = mini.inputs;
    targets = mini.targets;
    context = &ests[static_cast<std::size_t>(est)];
  } else {
    MessageReader reader(world_.Receive(stage_ - 1), kWhat);
    // A leaf that requires grad where the single-process graph had a non-leaf that did: the
    // boundary's kernels compute the input gradient exactly as there.
    flight.input = reader.NextTensor().requires_grad_(true);
    targets = reader.NextTensor();
    context = &streams_[static_cast<std::size_t>(est)];
    context->id = est;
    context->rng_state = reader.NextTensor();
  }
  torch::Tensor x = flight.input;
  {
    EstRngScope rng(*context);
    for (std::int64_t b = blocks_.first; b < blocks_.last; ++b) x = model_.ForwardBlock(b, x);
  }
  if (stage_ == stages_ - 1) {
    flight.output = torch::nn::functional::cross_entropy(x, targets);
    losses_[static_cast<std::size_t>(est)] = static_cast<float>(flight.output.item<double>());
    return;
  }
  flight.output = x;
  std::vector<std::uint8_t> message;
  AppendTensor(message, x.detach());
  AppendTensor(message, targets);
  AppendTensor(message, context->rng_state);
  world_.Send(message, stage_ + 1);
}

void Pipeline::Backward(std::int64_t est) {
  InFlight& flight = in_flight_[static_cast<std::size_t>(est)];
  stash_.BeginAccumulation(est, /*first=*/est == 0);
  if (stage_ == stages_ - 1) {
    flight.output.backward();
  } else {
    MessageReader reader(world_.Receive(stage_ + 1), kWhat);
    flight.output.backward(reader.NextTensor());
  }
  stash_.EndAccumulation(est);
  if (stage_ > 0) {
    std::vector<std::uint8_t> message;
    AppendTensor(message, flight.input.grad());
    world_.Send(message, stage_ - 1);
  }
  flight = InFlight{};  // its activations are no longer needed
}

}  // namespace elastic::agent
