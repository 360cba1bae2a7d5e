// Which execution plan (Rubick §3) one generation of `elastic-agent train` runs: train.plan
// (overridden by SLURM_ELASTIC_PLAN, which the supervisor sets on each relaunch) resolved for the
// generation's world size into perf/rubick's ExecutionPlan. Torch-free.
// Errors: ConfigError (common/toml_reader.h) for a plan this agent cannot run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/common/est_range.h"
#include "agent/config/job_config.h"
#include "perf/rubick/plan.h"

namespace elastic::agent {

// The plan this generation runs on `world_size` ranks: d = world_size replicas (or shards),
// a = ceil(E / W) ESTs time-sliced per rank (the EST runtime's gradient accumulation, so `ga`
// is the EST runtime made explicit, not new machinery), GC, ZeRO stage 2, offload with
// train.cpu_threads host threads; pp: W pipeline stages (dp = 1) with the E ESTs as micro-batches
// (on one rank pp is dp); tp: one tensor-parallel group of t = world_size ranks (dp = 1) that
// runs all E ESTs' micro-batches together (tensor_parallel.h; on one rank tp is dp). `auto` runs
// dp (the supervisor resolves auto through the planner before it relaunches); burst: the
// replicated update of dp (d = W) with blocks placed per train.burst_workers (burst_parallel.h).
// Throws ConfigError for a burst block on more ranks than W, or burst under d0 on W > 1.
// REQUIRES: 1 <= world_size <= train.ests (the trainer checks it first).
perf::ExecutionPlan ResolveExecutionPlan(const JobConfig& config, int world_size);

// The ESTs rank `rank` of `ranks` hosts under `plan` (their data, streams and loader state):
// the EST placement (est_placement.h), except under PP, where stage 0 feeds every EST into the
// pipeline and the other stages host none, and under TP, where every rank hosts every EST.
EstRange HostedEstsUnder(const perf::ExecutionPlan& plan, std::int64_t ests, int rank, int ranks);
// The same with each rank's device speed (`speeds`, one per rank): the plans that split ESTs over
// the ranks (dp and the other one-EST-block plans) split them by speed (HostedEstsBySpeed).
EstRange HostedEstsUnder(const perf::ExecutionPlan& plan, std::int64_t ests, int rank,
                         const std::vector<double>& speeds);

// The plan word this generation runs: train.plan, with auto as dp.
Plan RunPlanWord(const JobConfig& config);

// Whether burst parallelism runs: plan burst on several ranks. There the block-0 placement
// (burst_placement.h) hosts the ESTs' data, loader state and streams; on one rank every count is
// 1, and burst is dp.
bool RunsBurstPlan(const JobConfig& config, int ranks);

// For the start line: "zero-dp(dp=3+ga=3+zero-2)": the plan word and perf::Describe;
// "burst(2/1/1/2)": the ranks of each block.
std::string DescribeExecutionPlan(const JobConfig& config, const perf::ExecutionPlan& plan);

}  // namespace elastic::agent
