// GetBestPlan and the GPU sensitivity curve: enumerate, filter by memory, keep the fastest.
#include "perf/rubick/planner.h"

#include <string>

namespace elastic::perf {
namespace {

std::vector<int> Divisors(int n, int limit) {
  std::vector<int> out;
  for (int k = 1; k <= n && k <= limit; ++k) {
    if (n % k == 0) out.push_back(k);
  }
  return out;
}

bool Admitted(const ModelDesc& model, const Resources& resources, const ExecutionPlan& plan,
              const PlanSearchOptions& options) {
  if (!AllowedUnder(plan, options.determinism)) return false;
  if (options.family != Plan::kAuto && Family(plan) != options.family) return false;
  return CheckPlan(model, resources, plan).empty();
}

// The DP-based plans (t = p = 1) or 3D plans without PP for one (t, d): GA x GC x ZeRO variants.
void AddNonPipelinePlans(const ModelDesc& model, const Resources& resources, int tp, int dp,
                         const PlanSearchOptions& options, std::vector<ExecutionPlan>& out) {
  const int threads = resources.gpus > 0 ? resources.cpus / resources.gpus : 0;
  for (int a : Divisors(model.global_batch / dp, options.max_ga_steps)) {
    for (bool gc : {false, true}) {
      ExecutionPlan plan{.dp = dp, .tp = tp, .ga_steps = a, .gc = gc};
      std::vector<ExecutionPlan> variants{plan};
      if (tp == 1 && dp > 1) {
        variants.push_back({.dp = dp, .ga_steps = a, .gc = gc, .zero_stage = 2});
      }
      if (tp == 1 && threads >= 1) {
        variants.push_back({.dp = dp,
                            .ga_steps = a,
                            .gc = gc,
                            .zero_stage = 2,
                            .offload = true,
                            .cpu_threads = threads});
      }
      for (const ExecutionPlan& v : variants) {
        if (Admitted(model, resources, v, options)) out.push_back(v);
      }
    }
  }
}

void AddPipelinePlans(const ModelDesc& model, const Resources& resources, int tp, int pp, int dp,
                      const PlanSearchOptions& options, std::vector<ExecutionPlan>& out) {
  for (int m : Divisors(model.global_batch / dp, options.max_micro_batches)) {
    for (bool gc : {false, true}) {
      ExecutionPlan plan{.dp = dp, .tp = tp, .pp = pp, .micro_batches = m, .gc = gc};
      if (Admitted(model, resources, plan, options)) out.push_back(plan);
    }
  }
}

}  // namespace

std::vector<ExecutionPlan> EnumeratePlans(const ModelDesc& model, const Resources& resources,
                                          const PlanSearchOptions& options) {
  std::vector<ExecutionPlan> plans;
  const int g = resources.gpus;
  if (g < 1 || model.global_batch < 1) return plans;
  for (int tp : Divisors(g, g)) {
    for (int pp : Divisors(g / tp, g / tp)) {
      const int dp = g / (tp * pp);
      if (model.global_batch % dp != 0) continue;  // the per-GPU batch must be whole samples
      if (pp == 1) {
        AddNonPipelinePlans(model, resources, tp, dp, options, plans);
      } else {
        AddPipelinePlans(model, resources, tp, pp, dp, options, plans);
      }
    }
  }
  return plans;
}

Result<PlanChoice> GetBestPlan(const ModelDesc& model, const Resources& resources,
                               const PerfParams& params, const PlanSearchOptions& options) {
  const std::vector<ExecutionPlan> plans = EnumeratePlans(model, resources, options);
  if (plans.empty()) {
    return Result<PlanChoice>::Fail("perf: no valid plan for " + std::to_string(resources.gpus) +
                                    " GPUs under determinism " +
                                    std::string(ToString(options.determinism)) + " and plan " +
                                    std::string(ToString(options.family)));
  }
  std::optional<PlanChoice> best;
  std::string last_refusal;
  for (const ExecutionPlan& plan : plans) {
    if (std::string why = CheckMemory(model, resources, plan); !why.empty()) {
      last_refusal = std::move(why);
      continue;
    }
    Result<IterationTime> time = PredictIteration(model, resources, plan, params);
    if (!time) continue;  // cannot happen: enumerated plans pass CheckPlan
    if (!best || time->throughput > best->time.throughput) {
      best = PlanChoice{plan, *time, EstimateMemory(model, plan)};
    }
  }
  if (!best) {
    return Result<PlanChoice>::Fail("perf: none of " + std::to_string(plans.size()) +
                                    " plans fits memory on " + std::to_string(resources.gpus) +
                                    " GPUs (e.g. " + last_refusal + ")");
  }
  return Result<PlanChoice>::Ok(*best);
}

Resources PackedResources(const NodeSpec& node, int gpus) {
  Resources r;
  r.gpus = gpus;
  r.gpus_per_node = node.gpus_per_node;
  const double share = node.gpus_per_node > 0 ? static_cast<double>(gpus) / node.gpus_per_node : 0;
  r.cpus = node.gpus_per_node > 0 ? node.cpus_per_node * gpus / node.gpus_per_node : 0;
  r.gpu_mem_bytes = node.gpu_mem_bytes;
  r.host_mem_bytes = node.host_mem_bytes_per_node * share;
  r.b_intra = node.b_intra;
  r.b_inter = node.b_inter;
  r.b_pcie = node.b_pcie;
  r.gpu_flops = node.gpu_flops;
  return r;
}

std::vector<CurvePoint> GpuSensitivityCurve(const ModelDesc& model, const NodeSpec& node,
                                            int max_gpus, const PerfParams& params,
                                            const PlanSearchOptions& options) {
  std::vector<CurvePoint> curve;
  double best_throughput = 0;
  int best_gpus = 0;
  for (int g = 1; g <= max_gpus; ++g) {
    CurvePoint point;
    point.gpus = g;
    Result<PlanChoice> choice = GetBestPlan(model, PackedResources(node, g), params, options);
    if (choice) {
      point.best = *choice;
      if (choice->time.throughput > best_throughput) {
        best_throughput = choice->time.throughput;
        best_gpus = g;
      }
    }
    point.throughput = best_throughput;
    point.curve_gpus = best_gpus;
    curve.push_back(std::move(point));
  }
  return curve;
}

}  // namespace elastic::perf
