// MeasureSplitShares (split_shares.h): block and tensor-parallel shares of a training pass.
#include "agent/profile/split_shares.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>

#include "agent/common/median.h"
#include "agent/data/dataset.h"
#include "agent/est/device.h"
#include "agent/model/model.h"
#include "agent/train/trainer.h"

namespace elastic::agent {
namespace {

using Clock = std::chrono::steady_clock;

// The median seconds of each of `passes`, the device synchronised around each. The passes take
// turns within every repetition, so that a drift of the machine reaches them alike.
std::vector<double> AlternatingMedians(const std::vector<std::function<void()>>& passes,
                                       torch::Device device, int warmup, int reps) {
  std::vector<std::vector<double>> seconds(passes.size());
  for (int i = 0; i < warmup + reps; ++i) {
    for (std::size_t p = 0; p < passes.size(); ++p) {
      SynchronizeDevice(device);
      const Clock::time_point start = Clock::now();
      passes[p]();
      SynchronizeDevice(device);
      if (i >= warmup) {
        seconds[p].push_back(std::chrono::duration<double>(Clock::now() - start).count());
      }
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& pass : seconds) medians.push_back(Median(std::move(pass)));
  return medians;
}

// One training pass of the whole model: forward, the loss, backward.
void TrainingPass(Model& model, const torch::Tensor& inputs, const torch::Tensor& targets) {
  model.zero_grad(/*set_to_none=*/true);
  torch::nn::functional::cross_entropy(model.forward(inputs), targets).backward();
}

// One block's forward and backward from `input` (the last block's with the loss).
void BlockPass(Model& model, std::int64_t block, const torch::Tensor& input,
               const torch::Tensor& targets) {
  model.zero_grad(/*set_to_none=*/true);
  torch::Tensor out = model.ForwardBlock(block, input);
  if (block == model.BlockCount() - 1) {
    torch::nn::functional::cross_entropy(out, targets).backward();
  } else {
    out.backward(torch::ones_like(out));
  }
}

// Each block's median seconds, the blocks taking turns.
std::vector<double> BlockSeconds(Model& model, const torch::Tensor& inputs,
                                 const torch::Tensor& targets, torch::Device device, int warmup,
                                 int reps) {
  // Each block's input as a pipeline stage receives it: a leaf, needing a gradient unless the
  // block reads the data itself.
  std::vector<torch::Tensor> block_inputs{inputs};
  {
    torch::NoGradGuard no_grad;
    for (std::int64_t b = 0; b + 1 < model.BlockCount(); ++b) {
      block_inputs.push_back(model.ForwardBlock(b, block_inputs.back()));
    }
  }
  std::vector<std::function<void()>> passes;
  for (std::size_t b = 0; b < block_inputs.size(); ++b) {
    if (b > 0) block_inputs[b].requires_grad_(true);
    passes.emplace_back([&model, &block_inputs, &targets, b] {
      BlockPass(model, static_cast<std::int64_t>(b), block_inputs[b], targets);
    });
  }
  return AlternatingMedians(passes, device, warmup, reps);
}

// u from the whole pass unsplit (T_1) and as one rank of two (T_2): T_2 = T_1 (u + (1 - u) / 2).
double TensorParallelUnsplit(const JobConfig& config, Model& whole, const torch::Tensor& inputs,
                             const torch::Tensor& targets, torch::Device device, int warmup,
                             int reps) {
  TensorParallelShard shard{0, 2, [](const torch::Tensor& partial) { return partial.clone(); }};
  // Asked of the model already built, so that a model without a tp form is never built twice.
  if (whole.CannotSplitAcrossRanks() || whole.TensorParallelUnsupported(shard)) return 0;
  std::shared_ptr<Model> half = MakeSeededModel(config, device);
  half->UseTensorParallel(shard);
  half->train();
  const std::vector<double> seconds =
      AlternatingMedians({[&] { TrainingPass(whole, inputs, targets); },
                          [&] { TrainingPass(*half, inputs, targets); }},
                         device, warmup, reps);
  return std::clamp(2 * seconds[1] / seconds[0] - 1, 0.0, 0.95);
}

}  // namespace

SplitShares MeasureSplitShares(const JobConfig& config, int warmup, int reps) {
  JobConfig timed = config;
  timed.train.threads = 1;  // MakeSeededModel configures the runtime with it
  const torch::Device device = TrainingDevice(config);
  std::shared_ptr<Model> model = MakeSeededModel(timed, device);
  model->train();
  std::vector<std::int64_t> first(static_cast<std::size_t>(config.est_batch()));
  std::iota(first.begin(), first.end(), 0);
  auto [inputs, targets] = GatherSamples(LoadTrainingSet(config), first);
  inputs = inputs.to(device);
  targets = targets.to(device);
  SplitShares shares;
  shares.blocks = BlockSeconds(*model, inputs, targets, device, warmup, reps);
  const double total = std::accumulate(shares.blocks.begin(), shares.blocks.end(), 0.0);
  for (double& share : shares.blocks) share /= total;
  shares.tp_unsplit = TensorParallelUnsplit(timed, *model, inputs, targets, device, warmup, reps);
  return shares;
}

}  // namespace elastic::agent
