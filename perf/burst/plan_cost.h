// Cost of one burst-parallel assignment (GPU count per layer, placement per branch): iteration
// time, per-layer time T and GPU-sec amplification (DeepPool §4), GPU-sec and peak GPU use.
// The burst split reports its result through this evaluator, and tests compare splits with it.
//
// Timing rules (the burst split's search uses exactly these):
//  - A chain runs its layers one after another; layer i's time is
//    T_i = comm into i + comp(i,g_i) + sync(i,g_i), where comm into the first layer is 0 (each GPU
//    loads its own shard of the input; ASSUMED) and comm into a join is the sum of the transfers
//    from its branch ends.
//  - A block's branches run one after another on the fork/join GPUs (nested placement), except
//    branches marked separate, which run concurrently on GPUs of their own with separate-placement
//    transfers in and out; the block takes max(sum of nested branches, longest separate branch),
//    each branch counted up to its data's arrival at the join. The join's T still includes those
//    transfers (for GPU-sec and amplification), but the iteration adds only its comp + sync
//    after the block, since the block's span already covers the transfers.
//  - Amp(i,g) = T_i * g / comp(i,1) (§4.2; T includes comm and sync). The plan's amplification is
//    GPU-sec / single-GPU iteration time, GPU-sec = sum of T_i * g_i.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "perf/burst/layer_graph.h"
#include "perf/burst/profile.h"

namespace elastic::burst {

struct Assignment {
  std::vector<int> gpus;  // per layer, 1 <= gpus <= global batch
  // [block][branch] as in Decomposition::blocks: the branch runs on GPUs of its own, in parallel
  // with the other branches. Empty = every branch nested. Never set for a branch without layers.
  std::vector<std::vector<bool>> separate;
};

struct LayerCost {
  int gpus = 1;
  bool parallel = false;  // inside a branch placed on its own GPUs (at any nesting depth)
  double comm_in_s = 0.0;
  double comp_s = 0.0;
  double sync_s = 0.0;
  double time_s = 0.0;         // T = comm_in + comp + sync
  double amplification = 0.0;  // T * gpus / comp(i,1)
};

struct PlanCost {
  std::vector<LayerCost> layers;
  double iteration_s = 0.0;
  double single_gpu_s = 0.0;  // sum of comp(i,1): one GPU, no communication
  double gpu_sec = 0.0;       // sum of T_i * g_i
  double amplification = 0.0;  // gpu_sec / single_gpu_s
  double max_layer_amplification = 0.0;
  int peak_gpus = 0;  // most GPUs busy at once, separate branches included
};

// REQUIRES: `graph` is *DecomposeGraph(profile) for a validated profile. Fails when the
// assignment does not fit the profile or graph.
Result<PlanCost> EvaluatePlan(const ModelProfile& profile, const Decomposition& graph,
                              const Assignment& assignment);

}  // namespace elastic::burst
