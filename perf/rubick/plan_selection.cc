// SelectPlan: the agent's runnable plans, predicted with Rubick's model, the fastest kept.
#include "perf/rubick/plan_selection.h"

#include <algorithm>
#include <cstdio>

#include "perf/rubick/agent_memory.h"
#include "common/byte_size.h"
#include "perf/rubick/perf_model.h"

namespace elastic::agent {
namespace {

constexpr int kMaxCpuThreads = 256;  // the agent's bound on train.cpu_threads (job_config.h)

// Simplest first: on a tie (or a gain below min_gain) the earlier plan is kept, as in
// perf::EnumeratePlans. ga is not a candidate: on the agent it runs exactly what dp runs.
// tp last: only `statistical` admits it, and it needs a model with TP support.
constexpr Plan kAutoCandidates[] = {Plan::kDp, Plan::kGc, Plan::kZeroDp, Plan::kZeroOffload,
                                    Plan::kPp, Plan::kTp};

std::string Word(Plan plan) { return std::string(ToString(plan)); }

std::string Rate(double samples_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", samples_per_s);
  return text;
}

int Ranks(const NodeAllocation& allocation) {
  return allocation.nodes * std::max(1, allocation.workers_per_node);
}

// zero-offload's c when the planner picks it: every CPU a rank has (Rubick §4.2: more threads
// are never slower in the model), within the agent's bound; the config's c if CPUs are unknown.
int PlannerCpuThreads(const PlanRequest& request, const NodeAllocation& allocation) {
  if (allocation.cpus_per_node <= 0) return static_cast<int>(request.cpu_threads);
  return std::clamp(allocation.cpus_per_node / std::max(1, allocation.workers_per_node), 1,
                    kMaxCpuThreads);
}

}  // namespace

std::string AgentPlanRefusal(Plan word, const PlanRequest& request, int ranks) {
  const std::string at = "plan \"" + Word(word) + "\" on " + std::to_string(ranks) + " rank(s)";
  if (ranks < 1 || ranks > request.ests) {
    return at + ": the job has " + std::to_string(request.ests) +
           " ESTs, and each rank needs at least one";
  }
  if (!PlanAllowedUnder(word, request.determinism)) {
    return at + ": not allowed under determinism \"" + std::string(ToString(request.determinism)) +
           "\" (it changes the arithmetic; only \"statistical\" admits it)";
  }
  if (word == Plan::kBurst) {
    // DeepPool's planner (elastic-plan burst) sets a burst plan's per-block counts; Rubick's
    // model does not describe it, so the step runs the job's own train.burst_workers.
    return at + ": burst plans are chosen by elastic-plan burst, not by this performance model";
  }
  if (word == Plan::kAuto) return at + ": not a plan (expected dp, ga, gc, zero-dp, zero-offload, "
                                       "tp, pp or burst)";
  if ((word == Plan::kZeroDp || word == Plan::kZeroOffload) &&
      request.determinism == Determinism::kD0 && ranks > 1) {
    return at + ": ZeRO under determinism \"d0\" on more than one rank is not implemented";
  }
  if ((word == Plan::kTp || word == Plan::kPp) && request.whole_module) {
    return at + ": a TorchScript module (model.torchscript) runs whole on every rank";
  }
  if (word == Plan::kTp && request.tp_heads < 1) {
    return at + ": tp needs a transformer model (the agent's gpt)";
  }
  if (word == Plan::kTp && request.tp_heads % ranks != 0) {
    return at + ": the model's " + std::to_string(request.tp_heads) +
           " attention heads must split evenly across the ranks";
  }
  if (word == Plan::kPp && request.model_blocks > 0 && ranks > request.model_blocks) {
    return at + ": the model has " + std::to_string(request.model_blocks) +
           " blocks, at most one pipeline stage per block";
  }
  return {};
}

perf::GradientExchange GradientExchangeUnder(Determinism determinism) {
  return determinism == Determinism::kD0 ? perf::GradientExchange::kRankPartials
                                         : perf::GradientExchange::kEstSlots;
}

namespace {

// The model description for what the agent runs: the busiest rank hosts a = ceil(E / W) ESTs
// of b / E samples (E = 8 on W = 3: 3, 3, 2), and the step waits for it, so the batch is that of
// W ranks all as busy: W * a * b / E (PP: the E micro-batches of b / E, i.e. b).
perf::ModelDesc AgentModelDesc(const perf::FittedModel& model, const PlanRequest& request,
                               const perf::ExecutionPlan& plan) {
  perf::ModelDesc desc = model.model;
  desc.gradient_exchange = GradientExchangeUnder(request.determinism);
  const std::int64_t est_batch = request.global_batch / std::max<std::int64_t>(1, request.ests);
  desc.global_batch = static_cast<int>(static_cast<std::int64_t>(plan.dp) * plan.ga_steps *
                                       plan.micro_batches * est_batch);
  return desc;
}

struct Candidate {
  Plan word;
  perf::ExecutionPlan plan;
  std::optional<perf::IterationTime> time;
  std::string why_not;     // the agent's refusal, the memory estimator's or the model's
  bool runnable = false;   // the agent can run it (memory and prediction aside)
  bool fits = true;        // the memory estimate fits (or memory is unknown)
  double bytes = 0;        // its per-rank memory estimate (agent_memory.h)
};

Candidate Evaluate(const perf::FittedModel& model, const PlanRequest& request,
                   const NodeAllocation& allocation, Plan word, int cpu_threads) {
  Candidate c{word, {}, std::nullopt, AgentPlanRefusal(word, request, Ranks(allocation))};
  if (!c.why_not.empty()) return c;
  c.runnable = true;
  c.plan = AgentExecutionPlan(word, Ranks(allocation), request.ests, cpu_threads);
  const AgentMemoryEstimate memory =
      EstimateAgentMemory(model.model, request, word, Ranks(allocation));
  c.bytes = memory.device_total;
  const std::string refusal = AgentMemoryRefusal(memory, request, allocation);
  if (!refusal.empty()) {
    c.fits = false;
    c.why_not = "plan \"" + Word(word) + "\" on " + std::to_string(Ranks(allocation)) +
                " rank(s) does not fit memory (estimated): " + refusal;
  }
  Result<perf::IterationTime> time = PredictAgentPlan(model, request, allocation, c.plan);
  if (time) {
    c.time = *time;
  } else if (c.fits) {
    c.why_not = time.error;
  }
  return c;
}

Result<PlanSelection> SelectFixed(const perf::FittedModel& model, const PlanRequest& request,
                                  const NodeAllocation& allocation) {
  Candidate c = Evaluate(model, request, allocation, request.requested,
                         static_cast<int>(request.cpu_threads));
  if (!c.runnable || !c.fits) return Result<PlanSelection>::Fail("fixed " + c.why_not);
  // (The model's own refusals of a plan the agent runs, e.g. pp on a model without seq_len and
  // hidden, leave it kept without a prediction.)
  PlanSelection s;
  s.word = request.requested;
  s.plan = c.plan;
  s.reason = "fixed by the job (train.plan / --elastic-plan)";
  if (c.time) {
    s.predicted_samples_per_s = c.time->throughput;
  } else {
    s.reason += "; the model cannot predict it: " + c.why_not;
  }
  return Result<PlanSelection>::Ok(std::move(s));
}

// The selection for a candidate the agent runs (zero-offload with the planner's c threads).
PlanSelection SelectionOf(const Candidate& chosen, int cpu_threads) {
  PlanSelection s;
  s.word = chosen.word;
  s.plan = chosen.plan;
  if (chosen.word == Plan::kZeroOffload) s.cpu_threads = cpu_threads;
  s.predicted_samples_per_s = chosen.time ? chosen.time->throughput : 0.0;
  return s;
}

// No plan both fits and is predicted. One that fits memory but the model cannot predict (pp on
// stages that do not divide the layers) is preferred; else nothing fits, and the leanest plan
// runs rather than none (an estimate, and a CPU budget is an emulation). The curve does not count
// an over-budget plan (NodeSensitivityCurve), so elasticd does not grow a job where none fits.
Result<PlanSelection> Fallback(const Candidate& chosen, bool over_budget, const std::string& budget,
                               int cpu_threads, const perf::FittedModel& model) {
  PlanSelection s = SelectionOf(chosen, cpu_threads);
  s.over_budget = over_budget;
  s.reason = (over_budget ? "auto: no plan fits the memory budget, so the one with the smallest "
                            "estimate"
                          : "auto: the only plans that fit memory cannot be predicted (" +
                                chosen.why_not + "), so the first of them") +
             budget + " (model " + model.model_name + ")";
  return Result<PlanSelection>::Ok(std::move(s));
}

Result<PlanSelection> SelectAuto(const perf::FittedModel& model, const PlanRequest& request,
                                 const NodeAllocation& allocation,
                                 const SelectionOptions& options) {
  const int c = PlannerCpuThreads(request, allocation);
  std::optional<Candidate> best, smallest;  // smallest: of the runnable plans over the budget
  std::optional<Candidate> unpredicted;     // the first that fits but the model cannot predict
  std::string compared, kept, refusals, over_budget;
  for (Plan word : kAutoCandidates) {
    // One rank: zero-dp is dp with extra steps, pp and tp are dp (execution_plan.cc); skip
    // them as perf::EnumeratePlans skips ZeRO-DP at d = 1.
    if (Ranks(allocation) == 1 &&
        (word == Plan::kZeroDp || word == Plan::kPp || word == Plan::kTp)) {
      continue;
    }
    if (word == Plan::kGc && request.whole_module) continue;
    Candidate candidate = Evaluate(model, request, allocation, word, c);
    if (candidate.runnable && !candidate.fits) {
      over_budget += (over_budget.empty() ? "" : ", ") + Word(word) + " " +
                     FormatByteSize(candidate.bytes);
      if (!smallest || candidate.bytes < smallest->bytes) smallest = candidate;
    }
    if (candidate.runnable && candidate.fits && !candidate.time && !unpredicted) {
      unpredicted = candidate;
    }
    if (!candidate.time || !candidate.fits) {
      refusals += (refusals.empty() ? "" : "; ") + candidate.why_not;
      continue;
    }
    const double rate = candidate.time->throughput;
    compared += (compared.empty() ? "" : ", ") + Word(word) + " " + Rate(rate);
    if (!best) {
      best = candidate;
    } else if (rate > best->time->throughput * (1.0 + options.min_gain)) {
      best = candidate;
      kept.clear();
    } else if (rate > best->time->throughput) {
      char text[128];
      std::snprintf(text, sizeof text, "; kept %s: %s is only %+.1f%% (switching needs %+.0f%%)",
                    Word(best->word).c_str(), Word(word).c_str(),
                    100.0 * (rate / best->time->throughput - 1.0), 100.0 * options.min_gain);
      kept = text;
    }
  }
  const std::string budget =
      over_budget.empty() ? "" : "; over the memory budget of " +
                                     FormatByteSize(RankDeviceBudget(request, allocation)) +
                                     " per rank: " + over_budget;
  if (!best && (unpredicted || smallest)) return Fallback(unpredicted ? *unpredicted : *smallest,
                                                         !unpredicted, budget, c, model);
  if (!best) {
    return Result<PlanSelection>::Fail("auto: no plan can run on " +
                                       std::to_string(Ranks(allocation)) + " rank(s): " + refusals);
  }
  PlanSelection s = SelectionOf(*best, c);
  s.reason = "auto: fastest predicted of " + compared + " samples/s" + kept + budget +
             " (model " + model.model_name + ")";
  return Result<PlanSelection>::Ok(std::move(s));
}

}  // namespace

perf::Resources AgentResources(const perf::FittedModel& model, const NodeAllocation& allocation,
                             const perf::ExecutionPlan& plan) {
  perf::Resources r;
  r.gpus = Ranks(allocation);  // a "GPU" of the model is one agent rank
  r.gpus_per_node = std::max(1, allocation.workers_per_node);
  // Unknown CPUs: assume the job has the threads its plan asks for rather than refuse it.
  r.cpus = allocation.cpus_per_node > 0 ? allocation.cpus_per_node * allocation.nodes
                                        : std::max(1, plan.cpu_threads) * r.gpus;
  // CPU ranks: the "device" memory of a rank is its share of the node's memory.
  r.gpu_mem_bytes = allocation.mem_bytes_per_node / r.gpus_per_node;
  r.host_mem_bytes = allocation.mem_bytes_per_node * allocation.nodes;
  r.b_intra = model.b_intra;
  r.b_inter = model.b_inter;
  r.b_pcie = model.b_pcie;
  // The fixed cost per pass and the backward pass the parameters were fitted with (without them
  // a model fitted on them mispredicts, most at many micro-batches).
  r.fwd_s_per_pass = model.fwd_s_per_pass;
  r.backward = model.backward;
  return r;
}

perf::ExecutionPlan AgentExecutionPlan(Plan word, int ranks, std::int64_t ests, int cpu_threads) {
  perf::ExecutionPlan plan;
  plan.dp = ranks;
  // Each rank folds its hosted ESTs before the update: a = ceil(E / W) (execution_plan.cc).
  plan.ga_steps = static_cast<int>((ests + ranks - 1) / ranks);
  switch (word) {
    case Plan::kGc: plan.gc = true; break;
    case Plan::kZeroOffload:
      plan.offload = true;
      plan.cpu_threads = cpu_threads;
      [[fallthrough]];
    case Plan::kZeroDp: plan.zero_stage = 2; break;
    case Plan::kTp:  // one TP group of all W ranks running every EST (tensor_parallel.h)
      plan.dp = 1;
      plan.tp = ranks;
      plan.ga_steps = static_cast<int>(ests);
      break;
    case Plan::kPp:
      if (ranks > 1) {
        plan.dp = 1;
        plan.pp = ranks;
        plan.ga_steps = 1;
        plan.micro_batches = static_cast<int>(ests);
      }
      break;
    default: break;
  }
  return plan;
}

Result<perf::IterationTime> PredictAgentPlan(const perf::FittedModel& model,
                                             const PlanRequest& request,
                                             const NodeAllocation& allocation,
                                             const perf::ExecutionPlan& plan) {
  Result<perf::IterationTime> time =
      perf::PredictIteration(AgentModelDesc(model, request, plan),
                             AgentResources(model, allocation, plan), plan, model.params);
  if (!time) return time;
  perf::IterationTime t = *time;
  t.throughput = t.iter > 0 ? static_cast<double>(request.global_batch) / t.iter : 0.0;
  return Result<perf::IterationTime>::Ok(t);
}

Result<PlanSelection> SelectPlan(const perf::FittedModel& model, const PlanRequest& request,
                                 const NodeAllocation& allocation,
                                 const SelectionOptions& options) {
  if (request.requested == Plan::kAuto) return SelectAuto(model, request, allocation, options);
  return SelectFixed(model, request, allocation);
}

std::vector<std::pair<std::string, std::string>> PlanEnvironment(const PlanSelection& selection) {
  // Always both: an empty SLURM_ELASTIC_PLAN_ARGS clears what an earlier generation set.
  return {{"SLURM_ELASTIC_PLAN", Word(selection.word)},
          {"SLURM_ELASTIC_PLAN_ARGS",
           selection.cpu_threads ? "c=" + std::to_string(*selection.cpu_threads) : ""}};
}

std::vector<NodeCurvePoint> NodeSensitivityCurve(const perf::FittedModel& model,
                                                 const PlanRequest& request,
                                                 const NodeAllocation& per_node, int max_nodes,
                                                 const SelectionOptions& options) {
  std::vector<NodeCurvePoint> curve;
  double best_rate = 0.0;
  int best_nodes = 0;
  for (int n = 1; n <= max_nodes; ++n) {
    NodeAllocation allocation = per_node;
    allocation.nodes = n;
    NodeCurvePoint point;
    point.nodes = n;
    Result<PlanSelection> s = SelectPlan(model, request, allocation, options);
    if (s && s->over_budget) {
      point.why_not = s->reason;  // runnable, but no plan fits: no gain from these nodes
    } else if (s) {
      point.best = *s;
      if (s->predicted_samples_per_s > best_rate) {
        best_rate = s->predicted_samples_per_s;
        best_nodes = n;
      }
    } else {
      point.why_not = s.error;
    }
    point.samples_per_s = best_rate;
    point.curve_nodes = best_nodes;
    curve.push_back(std::move(point));
  }
  return curve;
}

}  // namespace elastic::agent
