// The supervisor's plan work for each generation of an elastic job: Rubick §3's plan choice for
// every node set, §4.3's drift watch and online refit, and §5.2's sensitivity curve for elasticd.
// What the supervisor's loop calls; it logs through `note` and reads the environment through
// `env` (Slurm's variables of the current allocation). Not thread-safe: one per supervisor.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/env.h"
#include "protocol/messages.h"
#include "perf/rubick/online_refit.h"
#include "perf/rubick/plan_drift.h"
#include "agent/supervisor/plan_inputs.h"
#include "perf/rubick/plan_selection.h"

namespace elastic::agent {

class GenerationPlanner {
 public:
  using NoteFn = std::function<void(const std::string&)>;
  GenerationPlanner(PlanInputs inputs, EnvLookup env, NoteFn note);

  const std::string& model_source() const { return inputs_.model_source; }
  const std::string& budget_source() const { return inputs_.budget_source; }

  // The plan for generation `generation` on `nodes` nodes, logged and remembered for the polls;
  // returns the step's environment (empty: the step runs the job's own plan).
  std::vector<std::pair<std::string, std::string>> Choose(std::uint64_t generation, int nodes);

  // One line of the step's output: the agent's model-size line bootstraps a model for a job that
  // has none; each generation's first reports are a fit point, and the model is refitted with
  // it (and again whenever the drift passes the threshold).
  void OnLine(const std::string& line);

  // The job's MAX nodes (elasticd's register reply): the sensitivity curve covers 1..MAX.
  void SetMaxNodes(int max_nodes);

  // running_plan, predicted_samples_per_s and speed_curve, for a poll (docs/protocol.md).
  void AddPollFields(daemon::PollRequest& poll) const;

 private:
  void OnDrift(const DriftTrigger& trigger);
  void Bootstrap(const ModelSize& size);
  void SaveRefitForRequeue();
  void UpdateSpeedCurve();
  const perf::FittedModel* Model() const { return refit_ ? &refit_->model() : nullptr; }

  PlanInputs inputs_;  // the request; its model seeds refit_, which owns the current one
  EnvLookup env_;
  NoteFn note_;
  std::optional<OnlineRefit> refit_;  // none without a performance model
  PlanDriftWatch drift_;
  std::uint64_t generation_ = 0;
  std::string running_plan_;              // the plan word of the current step, for elasticd
  double predicted_samples_per_s_ = 0.0;  // its predicted throughput (0 = none)
  // What the current step runs, chosen or not (none outside --elastic jobs and for burst): the
  // plan a measurement is a point of, on the allocation it ran on.
  std::optional<perf::ExecutionPlan> running_exec_;
  NodeAllocation running_allocation_;
  int max_nodes_ = 0;
  std::vector<double> speed_curve_;  // empty = none to report
};

}  // namespace elastic::agent
