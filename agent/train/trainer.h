// One data-parallel training run over the ESTs this process hosts (today: all of them, in one
// process). Includes LibTorch: only train_command.cc and tests include it.
//
// A step is: for each hosted EST in id order, forward/backward on its shard of the step's
// global batch with its own RNG stream, stash the gradient; reduce the stashed gradients in EST
// order (GradientStash); one optimizer step. The multi-process runtime will host a subset of
// ESTs per rank and exchange stashes before the reduction; nothing else in a step changes.
//
// Checkpoints (trainer_state.cc): SaveState/RestoreState move everything a step depends on
// (parameters, optimizer state, progress, the EST contexts) through named records of the
// torch-free container in agent/checkpoint/, so a resumed run continues bit for bit.
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

#include "agent/checkpoint/fingerprint.h"
#include "agent/config/job_config.h"
#include "agent/data/dataset.h"
#include "agent/data/sample_order.h"
#include "agent/model/model.h"
#include "agent/train/est_context.h"
#include "agent/train/gradient_stash.h"

namespace elastic::agent {

class CheckpointReader;
class CheckpointWriter;

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
  double last_loss() const { return last_loss_; }  // of the latest step; 0 before the first
  std::string ParamsSha256() const;
  const Model& model() const { return *model_; }

  // What a checkpoint of this run is valid for: model, ests, global_batch, lr, momentum, seed,
  // determinism, plan, threads, the training-set size and every parameter's name and shape.
  // train.steps is not in it: a finished run may be resumed with more steps.
  Fingerprint CheckpointFingerprint() const;

  // Adds the records "params", "optimizer", "progress" and "est/<id>" for every hosted EST
  // (docs/checkpoint-format.md). The caller commits the writer, which must carry
  // CheckpointFingerprint().
  void SaveState(CheckpointWriter& writer) const;

  // Continues from `checkpoint` instead of step 0. Throws ConfigError naming what differs when
  // its fingerprint is not this run's, CheckpointError when a record is missing or malformed.
  // REQUIRES: no step has run yet.
  void RestoreState(const CheckpointReader& checkpoint);

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
  double last_loss_ = 0;
};

}  // namespace elastic::agent
