// ZeRO-Offload's transfer path for parameters on a GPU (Rubick §2.1, §4.2: the copies T_off
// models): the owned parameters' fp32 master copy and momentum live in host memory (pinned when
// the parameters are on a GPU); a step brings the folded gradients to the host, updates the
// master copy on c host threads and copies it back. Includes LibTorch.
//
// Not thread-safe (the trainer's thread; Step runs the update's parts on RunParts threads).
// Borrows the parameter tensors: they must outlive the mirror.
#pragma once

#include <torch/types.h>

#include <cstddef>
#include <vector>

#include "agent/plan/parameter_shards.h"
#include "agent/plan/sgd_step.h"

namespace elastic::agent {

class OffloadMirror {
 public:
  // `params`: every parameter in named_parameters() order; the mirror holds `owned` of them.
  OffloadMirror(std::vector<torch::Tensor> params, ParameterShard owned);

  // The folded gradient of owned parameter i, already in host memory (W > 1: the reduce-
  // scatter's fold). Without it, Step copies the parameter's .grad from the device.
  void SetHostGradient(std::size_t i, const torch::Tensor& gradient);

  // One SGD update of every owned parameter (SgdUpdate, so the bits of the replicated step):
  // gradients not given by SetHostGradient are copied from the device (one copy each, then one
  // wait); `parts` of the owned parameters (indices relative to owned.first) are updated on
  // `threads` host threads; each master copy is copied back asynchronously (the next forward,
  // on the same stream, runs after it). `momentum` is indexed like the parameters.
  void Step(const std::vector<ParameterShard>& parts, std::size_t threads, const SgdHyper& hyper,
            std::vector<torch::Tensor>& momentum);

  // The parameters changed on the device (a checkpoint was restored): the next Step reads them
  // again. The first Step reads them too.
  void Invalidate() { masters_valid_ = false; }

  // Owned parameter i's master copy (host memory); defined after the first Step.
  const torch::Tensor& master(std::size_t i) const { return masters_[i]; }

 private:
  std::vector<torch::Tensor> params_;
  ParameterShard owned_;
  std::vector<torch::Tensor> masters_;
  std::vector<torch::Tensor> gradients_;
  bool masters_valid_ = false;
  bool gradients_given_ = false;
};

}  // namespace elastic::agent
