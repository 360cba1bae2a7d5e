// Plan choice over the performance model: Rubick's GetBestPlan (Algorithm 1, line 29) and the
// GPU resource-sensitivity curve (§5.2, Fig. 6). Pure and thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "common/job_options.h"
#include "common/result.h"
#include "perf/rubick/memory.h"
#include "perf/rubick/perf_model.h"
#include "perf/rubick/plan.h"

namespace elastic::perf {

struct PlanSearchOptions {
  // design.md §4: d0/d1/d2 search bitwise-safe plans only (no TP), `statistical` all plans.
  Determinism determinism = Determinism::kD1;
  // A fixed --elastic-plan restricts the search to plans whose Family() is this; kAuto = any.
  // (kBurst names DeepPool plans, which this model does not cover: nothing matches.)
  Plan family = Plan::kAuto;
  int max_ga_steps = 64;       // GA steps tried: divisors of b/d up to this
  int max_micro_batches = 64;  // PP micro-batches tried: divisors of b/d up to this
};

// Every structurally valid plan for exactly resources.gpus GPUs that the options admit, simplest
// first (t ascending, then p; within, GA ascending, no GC before GC, DP before ZeRO-DP before
// ZeRO-Offload). Memory is not checked. ZeRO-DP is left out at d = 1 (it is DP there) and
// ZeRO-Offload uses every CPU thread the job has per worker (c = cpus / g; more is never slower).
std::vector<ExecutionPlan> EnumeratePlans(const ModelDesc& model, const Resources& resources,
                                          const PlanSearchOptions& options = {});

struct PlanChoice {
  ExecutionPlan plan;
  IterationTime time;
  MemoryEstimate memory;
};

// GetBestPlan: the fastest enumerated plan that fits memory; ties go to the earlier (simpler)
// plan. Fails, saying why, when no plan is valid or none fits.
Result<PlanChoice> GetBestPlan(const ModelDesc& model, const Resources& resources,
                               const PerfParams& params, const PlanSearchOptions& options = {});

// One node type of the cluster; PackedResources gives a job g of its GPUs packed onto as few
// nodes as possible, with the CPUs and host memory that come with them in proportion.
struct NodeSpec {
  int gpus_per_node = 8;
  int cpus_per_node = 0;
  double gpu_mem_bytes = 0;
  double host_mem_bytes_per_node = 0;
  double b_intra = 0;
  double b_inter = 0;
  double b_pcie = 0;
  double gpu_flops = 0;
};
Resources PackedResources(const NodeSpec& node, int gpus);

// One point of the GPU sensitivity curve (Fig. 6).
struct CurvePoint {
  int gpus = 0;
  std::optional<PlanChoice> best;  // the best plan on exactly `gpus` GPUs (none if infeasible)
  // The curve: the highest throughput reachable with at most `gpus` GPUs (flat across GPU
  // counts no plan can use), reached with `curve_gpus` GPUs; 0 / 0 while nothing is feasible.
  double throughput = 0;
  int curve_gpus = 0;
};

// The curve for 1 .. max_gpus GPUs, in order.
std::vector<CurvePoint> GpuSensitivityCurve(const ModelDesc& model, const NodeSpec& node,
                                            int max_gpus, const PerfParams& params,
                                            const PlanSearchOptions& options = {});

}  // namespace elastic::perf
