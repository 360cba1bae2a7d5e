// Plan choice for one generation of an elastic-agent job (Rubick §3, §5.2): which execution plan
// the next `srun elastic-agent train` runs on the node set it gets, with the predicted
// throughput and the reason, and the job's resource-sensitivity curve over node counts (Fig. 6).
// Pure: no I/O, clocks or globals; thread-safe. Errors: Result with the reason.
//
// Why not perf::GetBestPlan as it is: GetBestPlan searches Rubick's whole plan space (any GA
// steps, any PP micro-batches, GC x ZeRO combinations), but the agent runs a fixed shape per plan
// word on W ranks (agent/plan/execution_plan.cc): a = ceil(E / W) accumulation steps (its EST
// time-slicing), one word at a time, PP with W stages and the E ESTs as micro-batches. So the
// candidates here are the agent's plans, and the choice among them is GetBestPlan's rule
// (Algorithm 1: the highest predicted throughput of the plans that fit memory), evaluated with
// the same perf::PredictIteration, CheckPlan and CheckMemory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/job_options.h"
#include "common/result.h"
#include "perf/rubick/perf_json.h"
#include "perf/rubick/perf_model.h"
#include "perf/rubick/plan.h"

namespace elastic::agent {

// What the job asks for and what does not change between generations.
struct PlanRequest {
  Plan requested = Plan::kAuto;                // train.plan / --elastic-plan
  Determinism determinism = Determinism::kD1;  // d0/d1/d2: bitwise-safe plans only
  std::int64_t ests = 1;                       // E: the agent runs on W <= E ranks
  std::int64_t global_batch = 256;             // b, fixed whatever W is (Rubick §3)
  std::int64_t cpu_threads = 1;  // train.cpu_threads: zero-offload's c when the job fixed it
  int model_blocks = 0;          // the model's blocks: pp needs W <= blocks; 0 = unknown
  int tp_heads = 0;  // the model's attention heads: tp needs W to divide them; 0 = no tp
  // A user's TorchScript module (model.torchscript): it runs whole on every rank, so pp and tp
  // are refused, and auto never picks gc (whether the module can be cut into segments is known
  // only once it is loaded; a job may still ask for gc).
  bool whole_module = false;
  // train.device_memory: one rank's device budget in bytes; 0 = the device's own (CPU ranks:
  // their share of the node's memory). Plans whose estimate exceeds it are ruled out
  // (agent_memory.h).
  double device_memory_bytes = 0;
  bool momentum_buffers = true;  // train.momentum != 0: SGD keeps a momentum buffer
};

// The node set of one generation: the supervisor starts workers_per_node agent ranks on each node
// (one per GPU the job holds there, else --ntasks-per-node), so ranks W = nodes * workers_per_node.
struct NodeAllocation {
  int nodes = 1;
  int workers_per_node = 1;
  int cpus_per_node = 0;             // 0 = unknown
  double mem_bytes_per_node = 0.0;   // 0 = unknown (memory not checked)
};

struct SelectionOptions {
  // A plan later in simplicity order (dp, gc, zero-dp, zero-offload, pp, tp) replaces an earlier
  // one only when predicted this much faster: the model's error is several percent (Rubick
  // Table 2), so a smaller predicted gain is noise, and the simpler plan is kept.
  double min_gain = 0.05;
};

// The plan one generation runs.
struct PlanSelection {
  Plan word = Plan::kDp;           // SLURM_ELASTIC_PLAN
  std::optional<int> cpu_threads;  // c for zero-offload chosen by the planner (else the config's)
  perf::ExecutionPlan plan;        // what the agent runs under `word` on W ranks
  double predicted_samples_per_s = 0.0;  // 0 when the model cannot predict `plan`
  bool over_budget = false;        // auto found no plan within the memory budget (the leanest)
  std::string reason;              // one line: why this plan
};

// The plan the agent runs for `word` on `ranks` ranks with E ests and c offload threads: the
// same rules as ResolveExecutionPlan (agent/plan/execution_plan.cc; a test keeps them equal).
// REQUIRES: word is dp, ga, gc, zero-dp, zero-offload, tp or pp; 1 <= ranks <= ests.
perf::ExecutionPlan AgentExecutionPlan(Plan word, int ranks, std::int64_t ests, int cpu_threads);

// Why the agent cannot run `word` on `ranks` ranks for this request (its own refusals,
// execution_plan.cc and job_config.cc: ranks vs ESTs, determinism, pp blocks, tp heads, ...);
// empty when it can.
std::string AgentPlanRefusal(Plan word, const PlanRequest& request, int ranks);

// The model's resources for `plan` on `allocation`: one "GPU" per agent rank, the node's CPUs and
// memory (its share per rank as device memory), the model's measured bandwidths.
perf::Resources AgentResources(const perf::FittedModel& model, const NodeAllocation& allocation,
                               const perf::ExecutionPlan& plan);

// The model's prediction (memory not checked) for what the agent runs: the busiest rank hosts
// a = ceil(E / W) ESTs of b / E samples each, so the iteration is predicted for a batch of
// W * a * b / E (all ranks as busy as the busiest) and the throughput is b over that time.
Result<perf::IterationTime> PredictAgentPlan(const perf::FittedModel& model,
                                             const PlanRequest& request,
                                             const NodeAllocation& allocation,
                                             const perf::ExecutionPlan& plan);

// How the agent's data-parallel ranks combine gradients under `determinism`, for the
// performance model's V_dp: d0 gathers one rank-order partial sum per rank; every other level
// gathers each EST's own gradient (ZeRO: each shard's pieces of them), so that every rank folds
// them in EST order (agent/train/gradient_stash.h, agent/plan/sharded_update.cc).
perf::GradientExchange GradientExchangeUnder(Determinism determinism);

// The plan for this generation. `auto`: the fastest of the agent's plans the determinism level
// admits and memory fits (see SelectionOptions::min_gain); where none fits but some can run, the
// one with the smallest memory estimate, its reason saying it exceeds the budget. A fixed plan is kept, checked:
// refused (with the reason) where the agent cannot run it on this allocation or it is not
// allowed under the determinism level; where the model cannot predict it, kept with 0
// samples/s. Fails also for `auto` when no plan can run.
Result<PlanSelection> SelectPlan(const perf::FittedModel& model, const PlanRequest& request,
                                 const NodeAllocation& allocation,
                                 const SelectionOptions& options = {});

// The step's environment for a selection: SLURM_ELASTIC_PLAN=<word> and, when the planner
// chose zero-offload's c, SLURM_ELASTIC_PLAN_ARGS=c=<n> (agent/config/job_config.h).
std::vector<std::pair<std::string, std::string>> PlanEnvironment(const PlanSelection& selection);

// One point of the node sensitivity curve (Rubick Fig. 6, over nodes instead of GPUs).
struct NodeCurvePoint {
  int nodes = 0;
  std::optional<PlanSelection> best;  // the plan on exactly `nodes` nodes; none if infeasible
  std::string why_not;                // why there is none
  // The highest throughput reachable with at most `nodes` nodes (flat where more nodes do not
  // help or cannot be used), reached with `curve_nodes` nodes; 0 / 0 while nothing is feasible.
  double samples_per_s = 0.0;
  int curve_nodes = 0;
};

// The curve for 1 .. max_nodes nodes like `per_node` (its `nodes` is ignored), in order.
std::vector<NodeCurvePoint> NodeSensitivityCurve(const perf::FittedModel& model,
                                                 const PlanRequest& request,
                                                 const NodeAllocation& per_node, int max_nodes,
                                                 const SelectionOptions& options = {});

}  // namespace elastic::agent
