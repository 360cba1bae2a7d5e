// DeepPool's burst split (its burst-parallel planner, §4.2): picks a GPU count for every
// layer so that the predicted iteration time is minimal while each layer's GPU-sec
// amplification stays within a user limit. Linear search (Algorithm 1) on chains, graph reduction
// for branch/join blocks.
//
// What is searched, exactly:
//  - Chains: a shortest path over (layer, GPU count) states. The edge (i-1,h)→(i,g) costs
//    T = comm(i-1,h)→(i,g) + comp(i,g) + sync(i,g) and exists only if
//    Amp(i,g) = T * g / comp(i,1) <= amp limit, with T including the transition exactly as in
//    Algorithm 1's T[i][g]. Algorithm 1 checks Amp(i-1,h) <= max(bestAmp, AmpLimit) in one pass
//    over h, which can accept an over-limit state seen before the first within-limit one; this
//    search applies the limit to every edge (the last layer included), so the limit always holds
//    and the result is the true optimum of the chain under it. Every layer on one GPU has
//    Amp = 1, so a plan exists for any limit >= 1.
//  - Blocks (fork → branches → join): for each fork count g, every branch is searched as a chain
//    starting at (fork, g); for each join count h, each branch takes its cheapest end count
//    including the transfer to the join. If the join's incoming transfers then break its limit,
//    each branch instead takes the end count with the cheapest transfer (ending at h when it
//    can). Then, longest branch first, a non-critical branch moves to GPUs of its own (run in
//    parallel, with separate-placement transfers, §4.2) when the GPUs fit within the total, the
//    block gets faster, and neither its first layer nor the join exceeds the limit. The block
//    becomes one edge fork(g)→join(h) of the enclosing chain ("tr" in §4.2).
//  - Pruning (exact): a count g is never considered for layer i when
//    (comp(i,g) + sync(i,g)) * g > amp limit * comp(i,1), since transfers only add to T.
//  - Memoisation: blocks with identical content (the same layer profiles and nesting, e.g. the
//    23 identical bottlenecks of a ResNet stage) share one table.
// Complexity for K candidate counts: chains O(L K log K) (transition_min.h), a block table
// O(K_fork * (branch layers * K log K + K_join * branches^2)).
// Pure (no I/O, no clocks); thread-safe; returns values, never throws for "no plan".
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "perf/burst/layer_graph.h"
#include "perf/burst/plan_cost.h"
#include "perf/burst/profile.h"

namespace elastic::burst {

enum class CountSet {
  kPowersOfTwo,  // 1, 2, 4, ... <= min(gpus, global batch): DeepPool's setting (§7.4)
  kAll,          // every count 1 ... min(gpus, global batch)
};

struct BurstSplitOptions {
  int gpus = 1;            // G: GPUs available to the job
  double amp_limit = 2.0;  // per-layer GPU-sec amplification limit, >= 1
  CountSet counts = CountSet::kPowersOfTwo;
  bool separate_branches = true;  // let non-critical branches run in parallel on their own GPUs
  // Scan every (source, target) count pair instead of the range-minimum search
  // (transition_min.h); same plans, O(K^2) per layer. Tests compare the two.
  bool exhaustive = false;
};

struct BurstSplit {
  Assignment assignment;
  PlanCost cost;                       // EvaluatePlan of the assignment
  double searched_iteration_s = 0.0;   // the search's own value; equals cost.iteration_s
  std::vector<int> candidate_counts;   // the counts considered
  int blocks = 0;                      // branch/join blocks reduced
  int block_tables = 0;                // distinct block tables computed (identical blocks share)
};

// GPU counts considered for `gpus` GPUs and `global_batch` samples (a layer never gets more GPUs
// than samples). Empty when gpus < 1 or global_batch < 1.
std::vector<int> CandidateCounts(int gpus, int global_batch, CountSet counts);

// Empty when the options are usable for `profile`, else a message naming the option.
std::string ValidateOptions(const BurstSplitOptions& options);

// Fails when the profile, graph or options are unusable.
Result<BurstSplit> SplitForBurst(const ModelProfile& profile, const BurstSplitOptions& options);

// The fastest uniform data-parallel plan (every layer on the same count) among the candidate
// counts that respects the amplification limit: the baseline burst plans are compared with.
Result<BurstSplit> BestUniformSplit(const ModelProfile& profile, const BurstSplitOptions& options);

}  // namespace elastic::burst
