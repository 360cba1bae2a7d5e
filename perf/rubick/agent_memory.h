// What one elastic-agent rank holds in its device's memory for each plan it runs, and the budget
// check that rules plans out (Rubick §5.2 leaves the estimate to the framework; this is the
// agent's, term by term from its own buffers: docs/perf-model.md "Memory of the agent's plans").
// Pure and thread-safe.
#pragma once

#include <string>

#include "common/job_options.h"
#include "perf/rubick/perf_model.h"
#include "perf/rubick/plan_selection.h"

namespace elastic::agent {

// Per rank, bytes. The peak is the larger of two phases: the ESTs' forward and backward passes
// (activations live, the exchange buffers not yet) and the gradient exchange after them
// (activations freed, the exchange's send and receive buffers live).
struct AgentMemoryEstimate {
  double weights = 0;      // the parameters: whole on every rank under every plan
  double gradients = 0;    // .grad: whole on every rank (pp and tp too, docs/plans.md)
  double optimizer = 0;    // the momentum buffers this rank's device keeps
  double est_slots = 0;    // every EST's gradient, kept for the EST-order fold (W > 1, d1/d2)
  double activations = 0;  // kept for the backward pass at the busiest moment
  double exchange = 0;     // transient buffers of the gradient exchange and parameter gather
  double device_total = 0;  // max(compute phase, exchange phase)
  double host = 0;          // zero-offload: what the rank's host threads keep (its shard)
};

// `word` on `ranks` ranks (1 <= ranks <= request.ests) for the model `model` (P, layers, bytes
// per element, activation bytes per sample, GC checkpoint bytes), with the request's E, b and
// determinism level. REQUIRES: word is dp, ga, gc, zero-dp, zero-offload, pp or tp.
AgentMemoryEstimate EstimateAgentMemory(const perf::ModelDesc& model, const PlanRequest& request,
                                        Plan word, int ranks);

// The device budget of one rank: train.device_memory when set, else the rank's share of the
// node's memory (CPU ranks), else 0 (unknown: not checked).
double RankDeviceBudget(const PlanRequest& request, const NodeAllocation& allocation);

// Why `estimate` does not fit one rank of `allocation` (its device budget, or for zero-offload the
// node's memory for the host shards of its ranks); empty when it fits or the limit is unknown.
std::string AgentMemoryRefusal(const AgentMemoryEstimate& estimate, const PlanRequest& request,
                               const NodeAllocation& allocation);

}  // namespace elastic::agent
