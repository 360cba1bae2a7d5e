// ResolveExecutionPlan: train.plan and the world size into an ExecutionPlan.
#include "agent/plan/execution_plan.h"

#include <algorithm>

#include "agent/plan/burst_placement.h"
#include "agent/est/est_placement.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// burst on this generation's ranks: every block's count fits in them (job_config.cc checked
// 1 <= count <= E), and d0's rank-order fold is not built for it beyond one rank. The count per
// block is checked against the model (CheckBurstPlanFitsModel).
void CheckBurstWorld(const JobConfig& config, int world_size) {
  const auto& workers = config.train.burst_workers;
  if (workers.empty()) {
    throw ConfigError(
        "train.plan: plan \"burst\" needs train.burst_workers: one rank count per "
        "model block");
  }
  const std::string key = config.train.burst_workers_origin.empty()
                              ? std::string("train.burst_workers")
                              : "burst (from " + config.train.burst_workers_origin + ")";
  for (std::size_t b = 0; b < workers.size(); ++b) {
    if (workers[b] > world_size) {
      throw ConfigError(key + ": block " + std::to_string(b) + " on " + std::to_string(workers[b]) +
                        " ranks, but this generation has " + std::to_string(world_size) +
                        ": expected at most " + std::to_string(world_size) + " per block");
    }
  }
  if (config.train.determinism == Determinism::kD0 && world_size > 1) {
    throw ConfigError(
        "train.plan: plan \"burst\" under determinism \"d0\" on more than one "
        "rank is not implemented");
  }
}

}  // namespace

perf::ExecutionPlan ResolveExecutionPlan(const JobConfig& config, int world_size) {
  perf::ExecutionPlan plan;
  plan.dp = world_size;
  // Every rank folds its hosted ESTs' gradients before the step's update: gradient
  // accumulation over a = ceil(E / W) micro-batches (the most any rank hosts).
  plan.ga_steps = static_cast<int>((config.train.ests + world_size - 1) / world_size);
  switch (config.train.plan) {
    case Plan::kAuto:
    case Plan::kDp:
    case Plan::kGa:
      break;
    case Plan::kGc:
      plan.gc = true;
      break;
    case Plan::kZeroOffload:
      plan.offload = true;
      plan.cpu_threads = static_cast<int>(config.train.cpu_threads);
      [[fallthrough]];
    case Plan::kZeroDp:
      plan.zero_stage = 2;
      break;
    case Plan::kPp:
      if (world_size > 1) {
        plan.dp = 1;
        plan.pp = world_size;
        plan.ga_steps = 1;  // under PP the micro-batches are the accumulation (perf/plan.h)
        plan.micro_batches = static_cast<int>(config.train.ests);
      }
      break;
    case Plan::kTp:
      // One TP group of all W ranks (tensor_parallel.h): d = 1, t = W, and every rank runs all
      // E ESTs' micro-batches (accumulated, in EST order) with its shard of the layers.
      plan.dp = 1;
      plan.tp = world_size;
      plan.ga_steps = static_cast<int>(config.train.ests);
      break;
    case Plan::kBurst:
      CheckBurstWorld(config, world_size);
      break;
  }
  return plan;
}

EstRange HostedEstsUnder(const perf::ExecutionPlan& plan, std::int64_t ests, int rank, int ranks) {
  return HostedEstsUnder(plan, ests, rank, std::vector<double>(std::max(ranks, 0), 1.0));
}

EstRange HostedEstsUnder(const perf::ExecutionPlan& plan, std::int64_t ests, int rank,
                         const std::vector<double>& speeds) {
  if (plan.pp > 1) return rank == 0 ? EstRange{0, ests} : EstRange{ests, ests};
  if (plan.tp > 1) return EstRange{0, ests};  // the whole TP group runs every EST
  return HostedEstsBySpeed(ests, rank, speeds);
}

Plan RunPlanWord(const JobConfig& config) {
  return config.train.plan == Plan::kAuto ? Plan::kDp : config.train.plan;
}

bool RunsBurstPlan(const JobConfig& config, int ranks) {
  return RunPlanWord(config) == Plan::kBurst && ranks > 1;
}

std::string DescribeExecutionPlan(const JobConfig& config, const perf::ExecutionPlan& plan) {
  if (RunPlanWord(config) == Plan::kBurst) {
    return "burst(" + DescribeBurstWorkers(config.train.burst_workers) + ")";
  }
  return std::string(ToString(RunPlanWord(config))) + "(" + perf::Describe(plan) + ")";
}

}  // namespace elastic::agent
