// One rank's part of a data-parallel training run: W ranks (a Communicator world; one process
// is W = 1) each host a contiguous block of the E ESTs (est_placement.h) and one replica of the
// parameters and optimizer state. Includes LibTorch: only train_command.cc and tests include it.
//
// A step is: for each hosted EST in id order, forward/backward on its shard of the step's
// global batch (chosen by EST id, independent of W; prepared ahead by the rank's shared loader
// threads, BatchQueue) with its own RNG stream, stash the gradient; exchange the stashes so
// every rank holds all E gradients; reduce them in EST order (GradientStash); gather the per-EST
// losses and average them in EST order; one optimizer step, the same on every rank, so the
// replicas stay identical. W = 1 folds each EST's gradient into the running sum as it appears
// (the same float operations in the same order, without per-EST copies).
// Determinism levels (docs/consistency.md): d1/d2 use the canonical EST-order reduction, d0 a
// rank-order one whose bits depend on W.
//
// Execution plans (agent/plan/, docs/plans.md): train.plan picks how the step runs, each plan
// bitwise equal to the EST baseline: dp and ga are the loop above (a = ceil(E/W) ESTs
// accumulated per rank); gc recomputes block activations in the backward pass
// (grad_checkpoint.h); zero-dp/zero-offload replace the exchange, fold and optimizer step with a
// sharded ParameterUpdate (parameter_update.h); pp runs the ESTs through pipeline stages
// (pipeline.h), each stage updating its own parameters; burst runs each model block on its own
// number of ranks, moving activations between blocks and folding the per-EST gradients in EST
// order before the replicated update (burst_parallel.h). The trainer holds the plan as a PlanStep
// (plan_step.h: the step's forward and backward passes) and a ParameterUpdate; MakePlanStep picks
// the one. The plan is chosen per generation and is not part of the checkpoint's compatibility:
// any plan resumes any checkpoint.
//
// Checkpoints (trainer_state.cc): SaveState/RestoreState move everything a step depends on
// (parameters, optimizer state, progress, the EST contexts and buffers, the bucket map, the
// loader queue)
// through named records of the torch-free container in agent/checkpoint/, so a resumed run
// continues bit for bit on any W.
//
// Errors: throws TrainingError; LibTorch failures surface as c10::Error (a std::exception);
// PeerLostError from the Communicator. Not thread-safe. LibTorch's thread settings are
// process-global (ConfigureTorchRuntime). Borrows the Communicator: it must outlive the Trainer.
#pragma once

#include <torch/optim/sgd.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "agent/checkpoint/fingerprint.h"
#include "agent/comm/communicator.h"
#include "agent/config/job_config.h"
#include "agent/data/batch_queue.h"
#include "agent/data/dataset.h"
#include "agent/model/model.h"
#include "agent/plan/parameter_update.h"
#include "agent/plan/plan_step.h"
#include "agent/est/est_context.h"
#include "agent/est/est_placement.h"
#include "agent/est/gradient_stash.h"
#include "perf/rubick/plan.h"

namespace elastic::agent {

class CheckpointReader;
class CheckpointWriter;
class NcclCommunicator;

// Applies the process-global LibTorch settings results depend on: intra-op thread count from the
// config (1 vs 2 threads give different bits), deterministic algorithms only; and, for speed
// only, glibc malloc thresholds that keep freed activations mapped (trainer.cc says why).
void ConfigureTorchRuntime(const JobConfig& config);

// The job's model with its initial weights: ConfigureTorchRuntime, then the first draws from
// the CPU's default generator after seeding it with train.seed (on every device), then moved to
// `device`. The trainer's and the profiler's models start from these bits.
std::shared_ptr<Model> MakeSeededModel(const JobConfig& config, torch::Device device);

// The CPU kernel ISA LibTorch's own kernels dispatch to in this process: "default", "avx2" or
// "avx512" (pinned to "default" under d2 by ATEN_CPU_CAPABILITY, see main.cc).
std::string CpuKernelIsa();

// The training set in data.path, read as data.format says. Throws DataError (the dataset) or
// ConfigError (data.augment = "flip" on inputs that are not images).
Dataset LoadTrainingSet(const JobConfig& config);
// The test set (Fashion-MNIST's test files, or the test*.pt shards); ConfigError for the corpus.
Dataset LoadTestSet(const JobConfig& config);

class Trainer {
 public:
  // Builds the model from torch::manual_seed(train.seed), the hosted ESTs and the optimizer.
  // Calls ConfigureTorchRuntime. Throws ConfigError when the dataset is smaller than one global
  // batch, for more ranks than ESTs, for burst settings that do not fit the model or W, for pp on
  // more ranks than the model has blocks and for tp on a model that cannot split (fmnist_cnn) or
  // not across this many ranks.
  // REQUIRES: `config` came from LoadJobConfig; every rank of `world` constructs one.
  Trainer(const JobConfig& config, Dataset data, Communicator& world);
  // A world of one rank hosting every EST.
  Trainer(const JobConfig& config, Dataset data);
  // The parameter update refers to this trainer's members: a Trainer stays where it was built.
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Collective. Trains one step and returns its loss (the mean cross-entropy over the global
  // batch, the same on every rank).
  double RunStep();

  // Burst plans on several ranks: every wait for another rank's block runs `filler`'s
  // background pieces (BurstParallel::SetIdleFiller). Other plans never wait that way: a no-op.
  void SetIdleFiller(multiplex::IdleFiller* filler);

  EstRange hosted() const { return hosted_; }
  Communicator& world() const { return *world_; }

  std::int64_t completed_steps() const { return step_; }
  double last_loss() const { return last_loss_; }  // of the latest step; 0 before the first
  // params_sha256 (params_digest.h): the parameters and the model's buffers, which between
  // steps are the first hosted EST's (on rank 0, EST 0's).
  std::string ParamsSha256() const;
  // The parameters only, the same on every replica.
  std::string ReplicaSha256() const;
  const Model& model() const { return *model_; }
  const perf::ExecutionPlan& plan() const { return plan_; }

  // What a checkpoint of this run is valid for: model, ests, global_batch, lr, momentum, seed,
  // determinism, threads, the training-set size and every parameter's name and shape.
  // train.steps is not in it: a finished run may be resumed with more steps; nor is the plan
  // (issue 8: any plan resumes any checkpoint; the "progress" record names the writer's plan).
  Fingerprint CheckpointFingerprint() const;

  // Collective: every rank calls it after the same step. Gathers every EST's context from the
  // rank hosting it and checks that this rank's parameters equal rank 0's (TrainingError if a
  // replica diverged). When `writer` is non-null (rank 0 only), adds the records "params",
  // "optimizer", "progress", "buckets", "loader" and "est/<id>" for all E ESTs
  // (docs/checkpoint-format.md); the caller commits it. It must carry CheckpointFingerprint().
  void SaveState(CheckpointWriter* writer);

  // Continues from `checkpoint` instead of step 0, taking the contexts of the hosted ESTs only
  // (a checkpoint written by any W resumes on any W). Throws ConfigError naming what differs
  // when its fingerprint is not this run's, CheckpointError when a record is missing or
  // malformed, or (d1/d2) when its bucket map is not this run's. REQUIRES: no step has run yet.
  void RestoreState(const CheckpointReader& checkpoint);

 private:
  Trainer(const JobConfig& config, Dataset data, Communicator* world,
          std::unique_ptr<Communicator> owned_world);
  std::string GatherLoaderRecord();
  std::vector<std::string> GatherEstBuffers();
  std::vector<std::vector<torch::Tensor>> ReadEstBuffers(const CheckpointReader& checkpoint) const;
  // Whether this rank contributes its hosted ESTs' losses, contexts and loader state to the
  // gathers: all ranks but the second and later members of a TP group, which host the same ESTs
  // as rank 0 (tensor_parallel.h).
  bool ReportsHostedEsts() const { return plan_.tp == 1 || world_->rank() == 0; }
  void RestoreLoader(const CheckpointReader& checkpoint);

  JobConfig config_;
  std::unique_ptr<Communicator> owned_world_;  // only for the single-process constructor
  Communicator* world_;
  torch::Device device_;      // train.device (device.h); the model and its batches live here
  perf::ExecutionPlan plan_;  // this generation's plan (agent/plan/execution_plan.h)
  // Each rank's device speed (ELASTIC_DEVICE_SPEED, gathered): the EST placement's weights.
  std::vector<double> speeds_;
  EstRange hosted_;
  Dataset data_;
  // W = 1, d0, pp or burst: gradients fold in place (burst: after its exchange); else per-EST
  // slots are exchanged.
  bool fold_locally_;
  std::unique_ptr<BatchQueue> queue_;
  std::shared_ptr<Model> model_;
  std::vector<EstContext> ests_;  // the ESTs this rank hosts (hosted_), in id order
  GradientStash stash_;
  // CUDA jobs exchanging slots on W > 1 ranks in a build with NCCL: the stash's device exchange
  // (gradient_stash.h). Null: the host exchange over world_. A shared_ptr, whose deleter is
  // bound where it is made, so builds without NCCL need no NcclCommunicator destructor.
  std::shared_ptr<NcclCommunicator> nccl_;
  std::unique_ptr<torch::optim::SGD> optimizer_;  // sharded plans: only a checkpoint container
  std::unique_ptr<PlanStep> plan_step_;           // the plan's forward and backward passes
  std::unique_ptr<ParameterUpdate> update_;
  std::int64_t step_ = 0;
  double last_loss_ = 0;
};

}  // namespace elastic::agent
