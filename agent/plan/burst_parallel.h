// Burst parallelism (DeepPool §3-§4) for chain models over the EST runtime: block b of the
// model runs data-parallel over its own number of ranks g_b (train.burst_workers), and each
// EST's activation moves between ranks where consecutive blocks place it differently. Includes
// LibTorch. Not thread-safe; one per rank.
//
// Placement: block b spreads the E ESTs of a step over ranks 0..g_b-1 in contiguous blocks, as
// the EST placement does for g_b ranks (rank r runs ESTs [floor(r·E/g_b), floor((r+1)·E/g_b))).
// Ranks >= g_b run nothing for block b: they wait for their next block's input, and with an
// IdleFiller (SetIdleFiller) run a background job's pieces meanwhile, as DeepPool fills the GPUs
// a layer leaves idle (agent/multiplex/idle_filler.h). An EST's home, which keeps its data, loader
// state and generator between steps, is its block-0 rank.
//
// A step is bulk-synchronous, block by block, as DeepPool's burst-parallel iteration:
//  - forward, b = 0..B-1: each rank runs block b for its ESTs in id order, under the EST's own
//    generator state; where block b+1 places the EST elsewhere, the activation, the targets and
//    the generator state move there (Communicator::Send/Receive, bytes only). The last block's
//    rank computes the EST's loss; the generator states then return home.
//  - backward, b = B-1..0: each rank backpropagates block b for its ESTs, from the loss or from
//    the gradient of the block's output (received where block b+1 ran elsewhere); the gradient
//    of the block's input moves back to block b-1's rank. Block b's parameter gradients of that
//    EST are copied out (as GradientStash::Capture would, an unreached parameter as zeros).
//  - every rank all-gathers every (EST, block) gradient piece, then folds them in EST-id order
//    into .grad through GradientStash's running fold, so the replicated update that follows
//    (ReduceAccumulatedMean, one SGD step) runs on every rank.
//
// Bitwise equal to the EST baseline (docs/consistency.md, "Plans"): every block boundary is cut
// as the pipeline cuts stage boundaries (the input is a leaf that requires grad where the
// single-process graph had a non-leaf that did), so each (EST, block) runs the same kernels on
// the same values and yields the same parameter gradient; the fold adds those gradients in
// EST-id order with the same operations as the slot fold, then divides by E. The trainer runs it
// as its PlanStep (plan_step.h) for burst on several ranks.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "agent/comm/communicator.h"
#include "agent/common/est_range.h"
#include "agent/data/mini_batch.h"
#include "agent/multiplex/idle_filler.h"
#include "agent/plan/burst_placement.h"
#include "agent/plan/plan_step.h"
#include "agent/est/est_context.h"
#include "agent/est/gradient_stash.h"

namespace elastic::agent {

class Model;

// Throws ConfigError unless `workers` has one count per block of `model` and every block's
// parameters belong to it alone (a parameter shared by two blocks would be folded twice).
void CheckBurstPlanFitsModel(const Model& model, const std::vector<std::int64_t>& workers,
                             const std::string& model_name);

class BurstParallel : public PlanStep {
 public:
  // REQUIRES: CheckBurstPlanFitsModel passed; every count <= world.size(); the model, world and
  // stash outlive this object.
  BurstParallel(Model& model, Communicator& world, GradientStash& stash, std::int64_t ests,
                std::vector<std::int64_t> workers);

  // Collective. One step's E ESTs through every block as above, leaving the gradients folded in
  // EST order in .grad (GradientStash's running fold over all E: ReduceAccumulatedMean follows).
  // `batch(e)` is EST e's mini-batch, called for this rank's home ESTs in id order; `home` are
  // their contexts (advanced on return). Returns the losses of the ESTs whose last block this
  // rank ran, in id order (so a rank-order gather is in EST-id order).
  std::vector<float> Run(const BatchSource& batch, std::vector<EstContext>& home) override;

  // From now on every wait for a message from another rank runs `filler`'s background pieces
  // while they are predicted to fit (null: plain waits). The filler must outlive its use. The
  // step's results do not depend on it: the background job has its own model, data and streams.
  void SetIdleFiller(multiplex::IdleFiller* filler) override { filler_ = filler; }

 private:
  struct Cell {
    torch::Tensor input;   // the block's input (a leaf that requires grad, except block 0)
    torch::Tensor output;  // its output, or the EST's loss for the last block
  };
  EstRange Mine(std::size_t block) const;
  int RankOf(std::size_t block, std::int64_t est) const;
  void Forward(std::size_t block, const std::function<MiniBatch(std::int64_t)>& batch,
               std::vector<EstContext>& home);
  void ReturnStreamsHome(std::vector<EstContext>& home);
  void Backward(std::size_t block);
  void CopyOutBlockGradients(std::size_t block, float* out);
  void ExchangeAndFold();
  // The next message from `source`; `slot` names the wait for the idle filler (SlotName).
  std::vector<std::uint8_t> ReceiveFrom(int source, const std::string& slot);

  Model& model_;
  Communicator& world_;
  GradientStash& stash_;
  std::int64_t ests_;
  std::vector<std::int64_t> workers_;                   // g_b per block
  std::vector<torch::Tensor> params_;                   // named_parameters() order
  std::vector<std::vector<std::size_t>> block_params_;  // indices into params_, per block
  std::vector<std::int64_t> block_numel_;               // floats of a block's gradient piece
  // This step, indexed by EST id: only the ESTs this rank holds at the current block are set.
  std::vector<std::vector<Cell>> cells_;  // [block][est]
  std::vector<torch::Tensor> targets_;
  std::vector<EstContext> streams_;
  std::vector<float> losses_;
  std::vector<std::vector<float>> pieces_;  // [block]: this rank's ESTs' gradient pieces
  multiplex::IdleFiller* filler_ = nullptr;
};

}  // namespace elastic::agent
