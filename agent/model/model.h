// The interface every trainable model implements: a torch::nn::Module mapping an input batch to
// class logits. Parameters are registered in a fixed order, which fixes named_parameters() order
// and with it the params_sha256 contract (train/params_digest.h).
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/model/tensor_parallel_layers.h"

namespace elastic::agent {

//
// A model is also a chain of blocks, forward = block N-1 ( ... block 0 (input)), so execution
// plans can treat blocks separately: gradient checkpointing recomputes chosen blocks in the
// backward pass (agent/plan/grad_checkpoint.h), pipeline stages would own runs of them.
// Whatever a plan does, the blocks' operations are the same, which keeps the bits the same.
class Model : public torch::nn::Module {
 public:
  // Logits [batch, classes] for `input` [batch, ...], or [batch, classes, positions] for a
  // sequence model (the layout of LibTorch's K-dimensional cross_entropy, so the trainer's loss
  // is the same call for both). Any randomness (dropout) draws from
  // LibTorch's default CPU generator, which the trainer points at the running EST's stream.
  // Equals running every block in order.
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;

  virtual std::int64_t BlockCount() const = 0;
  // Block `index`'s output for `input` (the previous block's output). REQUIRES: index < count.
  virtual torch::Tensor ForwardBlock(std::int64_t index, const torch::Tensor& input) = 0;
  // The parameters block `index` uses, in named_parameters() order.
  virtual std::vector<torch::Tensor> BlockParameters(std::int64_t index) const = 0;

  // Why the plans that place parts of the model on different ranks (pp, tp, burst) cannot run
  // this model, or nullopt when they can (the built-in models).
  virtual std::optional<std::string> CannotSplitAcrossRanks() const { return std::nullopt; }
  // Why gradient checkpointing cannot cut this model into blocks to recompute, or nullopt.
  virtual std::optional<std::string> CannotRecompute() const { return std::nullopt; }

  // Tensor parallelism (agent/plan/tensor_parallel.h). Models that cannot split their layers
  // keep these defaults. Why `shard` cannot be used, or nullopt when it can (e.g. the head
  // count is not a multiple of shard.size).
  virtual std::optional<std::string> TensorParallelUnsupported(
      const TensorParallelShard& shard) const {
    (void)shard;
    return std::string("tp needs a transformer model (model.name = \"gpt\")");
  }
  // From now on forward/ForwardBlock compute only `shard`'s part of the split layers and combine
  // the parts with shard.all_reduce. Parameters stay whole on every rank; the split ones are
  // listed by TensorParallelParameters. REQUIRES: !TensorParallelUnsupported(shard).
  virtual void UseTensorParallel(TensorParallelShard shard) { (void)shard; }
  // The parameters whose gradient this rank computes only for its own chunk: each is cut into
  // shard.size equal chunks along `dim`, rank r's is chunk r. Empty without tensor parallelism.
  virtual std::vector<SplitParameter> TensorParallelParameters() const { return {}; }
};

}  // namespace elastic::agent
