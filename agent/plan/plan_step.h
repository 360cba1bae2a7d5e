// PlanStep: the forward and backward passes of one training step under an execution plan, the
// seam between the trainer and the plans that decide how a step's ESTs run. Includes LibTorch.
//
// A step is: PlanStep::Run (every hosted EST's forward and backward, the gradients left in the
// GradientStash as the plan's ParameterUpdate expects them), then the trainer's loss gather,
// then ParameterUpdate::Step (parameter_update.h). Three implementations:
// - HostedEstsStep (dp, ga, gc, zero-dp, zero-offload, tp, and pp/burst on one rank): the
//   hosted ESTs one after another on this rank (hosted_ests_step.h);
// - Pipeline (pp on several ranks): the ESTs through pipeline stages with 1F1B (pipeline.h);
// - BurstParallel (burst on several ranks): each block on its own ranks (burst_parallel.h).
// Each is bitwise equal to the EST baseline (docs/consistency.md, "Plans"), so which one runs
// changes no bit of the result (tp excepted: statistical, tensor_parallel.h).
//
// Ownership: a PlanStep borrows the model, the world and the stash it was made with; they must
// outlive it. Not thread-safe: the trainer's thread only, one per rank.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "agent/comm/communicator.h"
#include "agent/common/est_range.h"
#include "agent/config/job_config.h"
#include "agent/data/mini_batch.h"
#include "agent/est/est_context.h"
#include "agent/est/gradient_stash.h"
#include "agent/multiplex/idle_filler.h"
#include "agent/plan/parameter_shards.h"
#include "perf/rubick/plan.h"

namespace elastic::agent {

class Model;

// EST e's mini-batch of the current step. Each implementation calls it in the order the
// trainer's BatchQueue dispatches them: this rank's hosted ESTs in id order, once each.
using BatchSource = std::function<MiniBatch(std::int64_t est)>;

class PlanStep {
 public:
  virtual ~PlanStep() = default;

  // Collective where the plan moves tensors between ranks (pp, tp, burst). Runs one step's
  // forward and backward passes for this rank's part of the E ESTs; `ests` are the contexts of
  // the ESTs this rank hosts (EstRange of the trainer, id order), advanced on return. Leaves the
  // gradients in the stash: folded in EST order (fold_locally, pp, burst) or captured per EST.
  // Returns the per-EST losses this rank reports, in EST-id order, so that a rank-order gather
  // over all ranks is in EST-id order (pp: the last stage holds all; burst: the last block's).
  virtual std::vector<float> Run(const BatchSource& batch, std::vector<EstContext>& ests) = 0;

  // Burst on several ranks: every wait for another rank runs `filler`'s background pieces
  // (BurstParallel). Every other plan never waits that way, so by default this does nothing.
  virtual void SetIdleFiller(multiplex::IdleFiller* /*filler*/) {}
};

// What MakePlanStep needs of the trainer; all borrowed.
struct PlanStepContext {
  const JobConfig& config;
  const perf::ExecutionPlan& plan;  // ResolveExecutionPlan for this generation
  Communicator& world;
  torch::Device device;  // train.device; the model and its batches live here
  Model& model;          // seeded, in training mode; the optimizer already refers to it
  GradientStash& stash;
  EstRange hosted;    // the ESTs this rank hosts
  bool fold_locally;  // the hosted loop folds into .grad (W = 1, d0, tp) instead of capturing
};

// The step this plan runs, and what the parameter update needs to know of it.
struct PlanStepSetup {
  std::unique_ptr<PlanStep> step;
  // The sharded update's owners (UpdateContext::owners): pp's stages (StageShards); empty
  // elsewhere (split by size).
  std::vector<ParameterShard> update_owners;
};

// Prepares the model for the plan and makes its step: tp switches the model to this rank's shard
// of its split layers (EnableTensorParallel, also on one rank so that a model that cannot split
// is refused whatever W is); pp on several ranks takes its stages as the update's owners; burst
// checks that train.burst_workers fits the model (also on one rank). Draws from no generator.
// Call after the optimizer is built and before MakeParameterUpdate, which reads
// Model::TensorParallelParameters. Throws ConfigError for a model the plan cannot run.
PlanStepSetup MakePlanStep(const PlanStepContext& context);

}  // namespace elastic::agent
