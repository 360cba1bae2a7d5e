// How one rank turns a step's per-EST gradients into the parameter update, and where the
// optimizer state lives: the seam between the trainer's EST loop and an execution plan's
// data-parallel strategy (Rubick §3). Includes LibTorch.
//
// Two strategies, both bitwise equal to the EST baseline (docs/consistency.md, "Plans"):
// - replicated (dp, ga, gc): every rank holds all E gradients, folds them in EST order and runs
//   the same SGD step on its full replica (the EST runtime as it was).
// - sharded (zero-dp, zero-offload; ZeRO stage 2): each rank owns a run of whole parameters,
//   receives only its shard of every EST's gradient (reduce-scatter), folds it in EST order,
//   keeps the momentum and updates only its shard (zero-offload: on c host threads), then the
//   parameters are all-gathered.
// - tensor-parallel (tp, t > 1; tensor_parallel.h): replicated parameters and optimizer state;
//   each rank's chunks of the split layers' gradients are all-gathered before the SGD step.
// - sharded by pipeline stage (pp): as above, but every stage already folded its own parameters'
//   gradients over all E ESTs (pipeline.h), so there is no reduce-scatter.
// Checkpoints stay plan-independent: both write the full SGD state in LibTorch's archive format
// and adopt it from a checkpoint written by any plan on any W.
//
// Not thread-safe (the trainer's thread). Borrows everything in UpdateContext.
#pragma once

#include <torch/optim/sgd.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/comm/communicator.h"
#include "agent/config/job_config.h"
#include "agent/model/tensor_parallel_layers.h"
#include "agent/plan/parameter_shards.h"
#include "agent/est/est_placement.h"
#include "agent/est/gradient_stash.h"
#include "perf/rubick/plan.h"

namespace elastic::agent {

class ParameterUpdate {
 public:
  virtual ~ParameterUpdate() = default;

  // Collective, after every hosted EST's backward (the stash holds the step's gradients, as
  // Trainer::RunStep leaves them): reduces them and updates the parameters on every rank.
  virtual void Step() = 0;

  // Collective: the full optimizer state as a LibTorch SGD archive (SGD::save), on rank 0 when
  // `primary`; "" elsewhere.
  virtual std::string OptimizerArchive(bool primary) = 0;

  // After the full state was loaded into the SGD from a checkpoint (any plan, any W wrote it):
  // keep what this plan keeps (sharded: only the owned parameters' momentum).
  virtual void AdoptLoadedOptimizerState() = 0;
};

struct UpdateContext {
  const JobConfig& config;
  Communicator& world;
  EstRange hosted;
  bool fold_locally;  // the EST loop folded into .grad (W = 1, d0) instead of capturing slots
  GradientStash& stash;
  torch::optim::SGD& optimizer;       // the replicated plan's optimizer; the full-state container
  std::vector<torch::Tensor> params;  // named_parameters() order
  // Which rank owns which parameters for a sharded update: empty = split by size
  // (SplitParameters); pp passes its stages' parameters (pipeline.h StageShards).
  std::vector<ParameterShard> owners;
  // tp: the model's split parameters (Model::TensorParallelParameters), whose gradients each rank
  // knows only for its own chunk (tensor_parallel.h); empty for every other plan.
  std::vector<SplitParameter> split;
};

// Throws ConfigError for a combination it cannot run (ZeRO under d0 on several ranks).
std::unique_ptr<ParameterUpdate> MakeParameterUpdate(const perf::ExecutionPlan& plan,
                                                     const UpdateContext& context);

// The bytes of `optimizer.save` (a zip in PyTorch's format).
std::string SgdArchiveBytes(const torch::optim::SGD& optimizer);

}  // namespace elastic::agent
