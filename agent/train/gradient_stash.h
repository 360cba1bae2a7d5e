// Per-EST gradients of one step and their reduction into the gradient the optimizer applies.
// Includes LibTorch. Not thread-safe.
//
// Consistency (design.md §4, docs/consistency.md): under d1/d2 the reduced gradient is
// ((g_0 + g_1) + g_2) + ... + g_{E-1}, summed element-wise in EST-id order, then divided by E,
// so its bits depend only on the ESTs' gradients, never on which rank hosted which EST or in
// what order they ran. To get there across ranks, every rank first receives every EST's
// gradient unchanged (ExchangeSlots: an allgather moves bytes, it never adds), then all ranks
// run the same fold on the same values; one rank (W = 1) runs exactly the same code.
//
// Layout ("bucket map"): one flat float32 vector per EST, the parameters in named_parameters()
// order, each flattened row-major. BucketMap() describes it; it is saved in checkpoints.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "agent/comm/communicator.h"
#include "agent/train/est_placement.h"

namespace elastic::agent {

class GradientStash {
 public:
  // `params` are the model's parameters in named_parameters() order and `names` their names
  // (for the bucket map); `ests` is the EST count.
  GradientStash(std::vector<torch::Tensor> params, std::vector<std::string> names,
                std::int64_t ests);

  // Copies the parameters' current gradients (flattened, in parameter order) into EST `est_id`'s
  // slot. An undefined gradient (a parameter the forward did not use) counts as zeros.
  void Capture(std::int64_t est_id);

  // Collective. Each rank contributes the slots of the ESTs it hosts (`hosted`, captured this
  // step); afterwards every rank holds every EST's slot. The allgather concatenates in rank
  // order, which is EST-id order because ranks host contiguous blocks in rank order.
  // Throws TrainingError when the gathered size is not ests x parameters (ranks disagree).
  void ExchangeSlots(Communicator& world, EstRange hosted);

  // d1/d2: replaces every parameter's gradient with the mean over all ESTs (the header's fold).
  // REQUIRES: every EST's slot is filled since the last reduction (Capture or ExchangeSlots).
  void ReduceMeanIntoGradients();

  // d0 (collective): each rank folds its hosted ESTs in id order, then the W partial sums are
  // folded in rank order and divided by E. Equals the d1 result for W = 1, usually not for
  // W > 1 (float addition is not associative): the placement-dependent reduction d0 permits.
  void ReduceMeanRankOrder(Communicator& world, EstRange hosted);

  // One line per parameter, "<name> <offset> <numel>", in slot order.
  std::string BucketMap() const;

 private:
  // Copies `sum` (a flat vector in slot layout) into the parameters' gradients.
  void AssignGradients(const torch::Tensor& sum);
  void RequireCaptured(EstRange range) const;

  std::vector<torch::Tensor> params_;
  std::vector<std::string> names_;
  std::int64_t numel_ = 0;            // floats per slot
  std::vector<torch::Tensor> slots_;  // one flat float tensor per EST, indexed by EST id
  std::vector<bool> captured_;
};

}  // namespace elastic::agent
