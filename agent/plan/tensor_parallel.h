// Tensor parallelism (TP; Rubick §2.1, §3; Megatron-LM, Shoeybi et al. 2019, §3) over the EST
// runtime. Includes LibTorch. Not thread-safe; one per rank.
//
// The unit: all W ranks of a generation form one TP group (t = W, d = 1). Every rank hosts all
// E ESTs (each loads every EST's mini-batch from its own queue: the same rows, the same seeds)
// and the group processes the ESTs' micro-batches together, one after another in EST-id order;
// within a micro-batch each rank computes its chunk of every split layer (attention heads,
// MLP columns; tensor_parallel_layers.h) and the ranks combine partial results with an
// all-reduce in the forward pass (g) and in the backward pass (f). Replicated parts (embeddings,
// LayerNorms, the head, row-parallel biases) see identical values on every rank, so each rank's
// running fold over the E ESTs gives them identical gradients; a split parameter's gradient is
// known only on the rank that owns the chunk.
//
// The update keeps the parameters and the optimizer state whole on every rank, as dp does: after
// the fold, every rank's chunks of the split gradients are all-gathered into the whole gradient
// and every rank runs the same SGD step. So checkpoints, params_sha256 and the replicas'
// agreement checks are those of every other plan, and any plan resumes a tp checkpoint. What TP
// splits here is the compute and the activations of the split layers, not the parameter memory.
//
// Consistency: not bitwise. A row-parallel layer sums t partial products where the unsplit layer
// sums one long dot product, so the rounding differs with t (docs/plans.md, "TP"): only
// determinism "statistical" admits tp. For a given t the result is reproducible: the all-reduce
// adds the ranks' partials in rank order (an AllGather of bytes, then the same additions on every
// rank), never in arrival order. With t = 1 the model runs the unsplit operations, so tp on one
// rank equals dp bit for bit.
#pragma once

#include <memory>

#include "agent/comm/communicator.h"
#include "agent/model/tensor_parallel_layers.h"
#include "agent/plan/parameter_update.h"

namespace elastic::agent {

class Model;

// Rank `world`.rank()'s shard of a TP group spanning `world`; its all_reduce sums in rank order.
// REQUIRES: `world` outlives the shard's use.
TensorParallelShard MakeTensorParallelShard(Communicator& world);

// Switches `model` to compute `world`.rank()'s shard of its split layers. Throws ConfigError
// when the model cannot split for this many ranks (fmnist_cnn: "tp needs a transformer model").
void EnableTensorParallel(Model& model, Communicator& world);

// The update described above; context.split lists the model's split parameters
// (Model::TensorParallelParameters). REQUIRES: every rank folded all E ESTs (fold_locally).
std::unique_ptr<ParameterUpdate> MakeTensorParallelUpdate(const UpdateContext& context);

}  // namespace elastic::agent
