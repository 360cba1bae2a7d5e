// One data-parallel training run over the ESTs this process hosts (today: all of them, in one
// process). Includes LibTorch: only train_command.cc and tests include it.
//
// A step is: for each hosted EST in id order, forward/backward on its shard of the step's
// global batch with its own RNG stream, stash the gradient; reduce the stashed gradients in EST
// order (GradientStash); one optimizer step. The multi-process runtime will host a subset of
// ESTs per rank and exchange stashes before the reduction; nothing else in a step changes.
//
// Errors: throws TrainingError; LibTorch failures surface as c10::Error (a std::exception).
// Not thread-safe. LibTorch's thread settings are process-global (ConfigureTorchRuntime).
#pragma once

#include <torch/optim/sgd.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "agent/config/job_config.h"
#include "agent/data/dataset.h"
#include "agent/data/sample_order.h"
#include "agent/model/model.h"
#include "agent/train/est_context.h"
#include "agent/train/gradient_stash.h"

namespace elastic::agent {

// Applies the process-global LibTorch settings results depend on: intra-op thread count from the
// config (1 vs 2 threads give different bits), deterministic algorithms only.
void ConfigureTorchRuntime(const JobConfig& config);

class Trainer {
 public:
  // Builds the model from torch::manual_seed(train.seed), the ESTs and the optimizer. Calls
  // ConfigureTorchRuntime. Throws ConfigError when the dataset is smaller than one global batch
  // and for plans this agent cannot run yet. REQUIRES: `config` came from LoadJobConfig.
  Trainer(const JobConfig& config, Dataset data);

  // Trains one step and returns its loss (the mean cross-entropy over the global batch).
  double RunStep();

  std::int64_t completed_steps() const { return step_; }
  std::string ParamsSha256() const;
  const Model& model() const { return *model_; }

 private:
  double RunEst(EstContext& est, std::span<const std::int64_t> shard);

  JobConfig config_;
  Dataset data_;
  SampleOrder order_;
  std::shared_ptr<Model> model_;
  std::vector<EstContext> ests_;  // the ESTs this process hosts, in id order
  GradientStash stash_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::int64_t step_ = 0;
};

}  // namespace elastic::agent
