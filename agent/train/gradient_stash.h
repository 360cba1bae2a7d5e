// Per-EST gradients of one step and their reduction into the gradient the optimizer applies.
// Includes LibTorch. Not thread-safe.
//
// Consistency (design.md §4): the reduced gradient is ((g_0 + g_1) + g_2) + ... + g_{E-1},
// summed element-wise in EST-id order, then divided by E, so its bits depend only on the ESTs'
// gradients, never on which process hosted which EST or in what order they ran. The
// multi-process runtime must keep exactly this fold (or replace it everywhere at once).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace elastic::agent {

class GradientStash {
 public:
  // `params` are the model's parameters in named_parameters() order; `ests` is the EST count.
  GradientStash(std::vector<torch::Tensor> params, std::int64_t ests);

  // Copies the parameters' current gradients (flattened, in parameter order) into EST `est_id`'s
  // slot. An undefined gradient (a parameter the forward did not use) counts as zeros.
  void Capture(std::int64_t est_id);

  // Replaces every parameter's gradient with the mean over all ESTs (see the header comment).
  // REQUIRES: Capture was called for every EST since the last reduction.
  void ReduceMeanIntoGradients();

 private:
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> slots_;  // one flat float tensor per EST, indexed by EST id
  std::vector<bool> captured_;
};

}  // namespace elastic::agent
