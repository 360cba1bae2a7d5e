// The building blocks of Megatron-style tensor parallelism (Shoeybi et al. 2019, §3) as a model
// sees them: which shard this rank computes, and the two communication operators at the edges
// of a parallel region. Includes LibTorch. The all-reduce itself comes in as a function, so
// models need no communicator (agent/plan/tensor_parallel.cc supplies one over MPI).
//
// A column-parallel linear (rows of the weight split across ranks: output features, e.g. the
// first MLP layer or the attention heads' Q/K/V) is entered through f = CopyToTensorParallel
// (identity forward, all-reduce of the input gradient backward); a row-parallel linear (columns
// of the weight: input features, e.g. the second MLP layer or the attention output projection)
// leaves through g = ReduceFromTensorParallel (all-reduce forward, identity backward), and its
// bias is added once, after g. Megatron §3, Fig. 3.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>

namespace elastic::agent {

struct TensorParallelShard {
  int rank = 0;  // which chunk of every split layer this rank computes
  int size = 1;  // t, the number of ranks splitting the layers; 1 = no tensor parallelism
  // The element-wise sum of `partial` over the t ranks, the same bits on every rank.
  // Collective: every rank calls it at the same point. Unused when size == 1.
  std::function<torch::Tensor(const torch::Tensor&)> all_reduce;
};

// A parameter cut into shard.size equal chunks along `dim`; rank r computes with chunk r only.
struct SplitParameter {
  torch::Tensor param;
  std::int64_t dim = 0;
};

// Megatron's f. With size 1 it returns `input` itself (no autograd node): t = 1 runs exactly the
// operations of the unsplit model.
torch::Tensor CopyToTensorParallel(const torch::Tensor& input, const TensorParallelShard& shard);

// Megatron's g. With size 1 it returns `partial` itself.
torch::Tensor ReduceFromTensorParallel(const torch::Tensor& partial,
                                       const TensorParallelShard& shard);

// This rank's chunk of `param` along `dim` (a view, so gradients reach the whole parameter's
// .grad in that chunk only); `param` itself when size == 1.
// REQUIRES: param.size(dim) % shard.size == 0.
torch::Tensor ChunkOf(const torch::Tensor& param, std::int64_t dim,
                      const TensorParallelShard& shard);

}  // namespace elastic::agent
