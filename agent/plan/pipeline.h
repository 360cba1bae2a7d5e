// Pipeline parallelism (PP; Rubick §2.1, §3, Megatron-style stages with the 1F1B schedule of
// Narayanan et al. 2021) over the EST runtime: rank s of p runs stage s, a contiguous run of the
// model's blocks (Model::ForwardBlock), for every EST of the step; the ESTs are the pipeline's
// micro-batches, in id order. Includes LibTorch. Not thread-safe; one per rank.
//
// Bitwise equal to the EST baseline (docs/consistency.md, "Plans"): each EST's forward runs the
// same blocks on the same values under its own generator stream (its state travels with the
// activation from stage to stage and returns to rank 0 after the step); the gradient entering a
// stage is the one the single-process backward would pass across that block boundary (moved as
// bytes); 1F1B runs the backward passes in EST-id order, so autograd accumulates every stage's
// parameter gradients in that order, which is the runtime's running fold (GradientStash). The
// sharded update then treats each stage's parameters as that rank's shard. The trainer runs it as
// its PlanStep (plan_step.h) for pp on several ranks.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "agent/comm/communicator.h"
#include "agent/data/mini_batch.h"
#include "agent/plan/parameter_shards.h"
#include "agent/plan/plan_step.h"
#include "agent/est/est_context.h"
#include "agent/est/gradient_stash.h"

namespace elastic::agent {

class Model;

// Blocks [first, last) that stage `stage` of `stages` runs: floor(s·B/p) .. floor((s+1)·B/p).
struct StageBlocks {
  std::int64_t first = 0;
  std::int64_t last = 0;
};
StageBlocks BlocksOfStage(std::int64_t blocks, int stage, int stages);

// Each stage's parameters as a shard of named_parameters() (the sharded update's owners).
// Throws ConfigError when there are more stages than blocks or a stage's parameters are not one
// contiguous run of named_parameters().
std::vector<ParameterShard> StageShards(const Model& model, int stages);

class Pipeline : public PlanStep {
 public:
  // REQUIRES: `world`.size() stages; the model, world and stash outlive the pipeline.
  Pipeline(Model& model, Communicator& world, GradientStash& stash, std::int64_t ests);

  // Collective over the stages: one step's E micro-batches through this rank's stage with 1F1B,
  // leaving the stage's parameter gradients folded in EST order in .grad (GradientStash's
  // running fold: ReduceAccumulatedMean follows). `batch(e)` is EST e's mini-batch, called on
  // stage 0 only; `ests` are the EST contexts on rank 0 (all E, advanced on return), empty
  // elsewhere. Returns the E per-EST losses on the last stage, nothing elsewhere.
  std::vector<float> Run(const BatchSource& batch, std::vector<EstContext>& ests) override;

 private:
  struct InFlight {
    torch::Tensor input;   // stage input (a leaf that requires grad, except on stage 0)
    torch::Tensor output;  // stage output, or the loss on the last stage
  };
  void Forward(std::int64_t est, const std::function<MiniBatch(std::int64_t)>& batch,
               std::vector<EstContext>& ests);
  void Backward(std::int64_t est);

  Model& model_;
  Communicator& world_;
  GradientStash& stash_;
  std::int64_t ests_;
  int stage_;
  int stages_;
  StageBlocks blocks_;
  std::vector<InFlight> in_flight_;  // index = EST id, this step
  std::vector<EstContext> streams_;  // stages > 0: the ESTs' streams received this step
  std::vector<float> losses_;        // last stage
};

}  // namespace elastic::agent
