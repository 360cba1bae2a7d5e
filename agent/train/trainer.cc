// Trainer: the EST loop, the reduction and the optimizer step.
#include "agent/train/trainer.h"

#include <torch/torch.h>

#include <cmath>
#include <mutex>

#include "agent/common/errors.h"
#include "agent/model/registry.h"
#include "agent/train/params_digest.h"
#include "scheduler/common/toml_reader.h"

namespace elastic::agent {
namespace {

std::vector<EstContext> MakeHostedEsts(const JobConfig& config) {
  std::vector<EstContext> ests;
  for (std::int64_t id = 0; id < config.train.ests; ++id) {
    ests.push_back(MakeEstContext(static_cast<std::uint64_t>(config.train.seed), id));
  }
  return ests;
}

// Returns `data` after checking the config can train on it (before SampleOrder relies on it).
Dataset CheckRunnable(const JobConfig& config, Dataset data) {
  if (config.train.plan != Plan::kAuto && config.train.plan != Plan::kDp) {
    throw ConfigError("train.plan: plan \"" + std::string(ToString(config.train.plan)) +
                      "\" is not implemented by this elastic-agent yet: expected auto or dp");
  }
  if (config.train.global_batch > data.size()) {
    throw ConfigError("train.global_batch: " + std::to_string(config.train.global_batch) +
                      " is larger than the " + std::to_string(data.size()) +
                      " training samples in " + config.data.path);
  }
  return data;
}

// Initial weights are the first draws from the default generator after seeding it.
std::shared_ptr<Model> MakeSeededModel(const JobConfig& config) {
  ConfigureTorchRuntime(config);
  torch::manual_seed(static_cast<std::uint64_t>(config.train.seed));
  return MakeModel(config.model.name);
}

}  // namespace

void ConfigureTorchRuntime(const JobConfig& config) {
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
  at::globalContext().setDeterministicAlgorithms(/*enabled=*/true, /*warn_only=*/false);
}

Trainer::Trainer(const JobConfig& config, Dataset data)
    : config_(config),
      data_(CheckRunnable(config, std::move(data))),
      order_(data_.size(), config.train.global_batch,
             static_cast<std::uint64_t>(config.train.seed)),
      model_(MakeSeededModel(config)),
      ests_(MakeHostedEsts(config)),
      stash_(model_->parameters(), config.train.ests) {
  model_->train();
  optimizer_ = std::make_unique<torch::optim::SGD>(
      model_->parameters(),
      torch::optim::SGDOptions(config.train.lr).momentum(config.train.momentum));
}

double Trainer::RunStep() {
  std::span<const std::int64_t> batch = order_.StepIndices(step_);
  const std::int64_t est_batch = config_.est_batch();
  double loss_sum = 0;
  for (EstContext& est : ests_) {
    auto shard = batch.subspan(static_cast<std::size_t>(est.id * est_batch),
                               static_cast<std::size_t>(est_batch));
    loss_sum += RunEst(est, shard);
    stash_.Capture(est.id);
  }
  const double loss = loss_sum / static_cast<double>(ests_.size());
  // Stop before a diverged update reaches the parameters: every later step would be NaN too.
  if (!std::isfinite(loss)) {
    throw TrainingError("step " + std::to_string(step_ + 1) + ": loss is " + std::to_string(loss) +
                        ": training diverged (try a smaller train.lr)");
  }
  stash_.ReduceMeanIntoGradients();
  optimizer_->step();
  ++step_;
  last_loss_ = loss;
  return loss;
}

double Trainer::RunEst(EstContext& est, std::span<const std::int64_t> shard) {
  // from_blob borrows the indices; index_select copies the rows before the span goes stale.
  torch::Tensor index = torch::from_blob(const_cast<std::int64_t*>(shard.data()),
                                         {static_cast<std::int64_t>(shard.size())}, torch::kInt64);
  torch::Tensor inputs = data_.images.index_select(0, index);
  torch::Tensor targets = data_.labels.index_select(0, index);
  // set_to_none: every EST's backward writes fresh gradients, none accumulates onto another's.
  model_->zero_grad(/*set_to_none=*/true);
  EstRngScope rng(est);
  torch::Tensor loss = torch::nn::functional::cross_entropy(model_->forward(inputs), targets);
  loss.backward();
  return loss.item<double>();
}

std::string Trainer::ParamsSha256() const { return agent::ParamsSha256(*model_); }

}  // namespace elastic::agent
