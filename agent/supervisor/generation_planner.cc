// GenerationPlanner: plan choice per launch, refit on drift, the curve reported to elasticd.
#include "agent/supervisor/generation_planner.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "agent/supervisor/refit_store.h"
#include "perf/rubick/default_perf_model.h"
#include "perf/rubick/plan.h"

namespace elastic::agent {

GenerationPlanner::GenerationPlanner(PlanInputs inputs, EnvLookup env, NoteFn note)
    : inputs_(std::move(inputs)), env_(std::move(env)), note_(std::move(note)) {
  // A requeued job resumes its online refit (refit_store.h), a bootstrapped one included;
  // model_source says which model it uses.
  std::string why;
  std::optional<perf::FittedModel> saved;
  if (!inputs_.checkpoint_dir.empty()) {
    saved = LoadRefit(inputs_.checkpoint_dir,
                      inputs_.model ? inputs_.model->model_name : inputs_.model_name, why);
  }
  if (saved) {
    inputs_.model_source =
        "the online refit an earlier run of this job saved in " +
        (std::filesystem::path(inputs_.checkpoint_dir) / kRefitFileName).string() + " (" +
        std::to_string(saved->fit_points.size()) + " points; it replaces " + inputs_.model_source +
        ")";
    refit_.emplace(std::move(*saved));
    return;
  }
  if (!why.empty()) inputs_.model_source += " (the saved online refit is not used: " + why + ")";
  if (inputs_.model) refit_.emplace(*inputs_.model);
}

// Rubick §3: re-plan for every node set.
std::vector<std::pair<std::string, std::string>> GenerationPlanner::Choose(std::uint64_t generation,
                                                                           int nodes) {
  generation_ = generation;
  const PlanRequest& request = inputs_.request;
  const std::string g = "generation " + std::to_string(generation) + ": plan ";
  std::optional<PlanSelection> chosen;
  const bool elastic = env_("SLURM_ELASTIC").value_or("") == "1";
  // Set with or without a model: the generation's measurement is a point on this allocation.
  if (elastic) running_allocation_ = AllocationFromEnv(nodes, env_);
  if (!elastic) {
    // Outside an --elastic job the SPANK plugin refuses an srun that carries elastic
    // settings (SLURM_ELASTIC_PLAN), so the step runs the job's own plan.
    note_(g + "the job's own (not an --elastic job: SLURM_ELASTIC is unset)");
  } else if (const perf::FittedModel* model = Model()) {
    Result<PlanSelection> s = SelectPlan(*model, request, running_allocation_);
    if (s) {
      chosen = *s;
    } else {
      note_(g + "none chosen on " + std::to_string(nodes) + " node(s): " + s.error +
            "; the step runs the job's plan " + std::string(ToString(request.requested)));
    }
  } else {
    note_(g + "the job's own (no performance model yet: this generation's measurements "
              "bootstrap one)");
  }
  running_exec_.reset();
  if (!chosen) {
    // auto without a choice runs dp in the agent (execution_plan.cc RunPlanWord).
    const Plan word = request.requested == Plan::kAuto ? Plan::kDp : request.requested;
    running_plan_ = ToString(word);
    predicted_samples_per_s_ = 0.0;
    const int ranks = running_allocation_.nodes * std::max(1, running_allocation_.workers_per_node);
    if (elastic && word != Plan::kBurst && AgentPlanRefusal(word, request, ranks).empty()) {
      running_exec_ = AgentExecutionPlan(word, ranks, request.ests,
                                         static_cast<int>(request.cpu_threads));
    }
    drift_.StartGeneration(generation, 0.0);
    return {};
  }
  running_exec_ = chosen->plan;
  running_plan_ = ToString(chosen->word);
  predicted_samples_per_s_ = chosen->predicted_samples_per_s;
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f", chosen->predicted_samples_per_s);
  note_(g + running_plan_ + " (predicted " + rate + " samples/s, " + chosen->reason + "); runs " +
        perf::Describe(chosen->plan));
  drift_.StartGeneration(generation, chosen->predicted_samples_per_s);
  return PlanEnvironment(*chosen);
}

void GenerationPlanner::OnLine(const std::string& line) {
  if (!refit_) {
    if (std::optional<ModelSize> size = ParseModelSizeLine(line)) Bootstrap(*size);
  }
  if (auto trigger = drift_.OnLine(line)) OnDrift(*trigger);
}

// Rubick §4.3 for a model nothing describes: its size from the agent, its speed and parameters
// from the job's own generations (online_refit.h).
void GenerationPlanner::Bootstrap(const ModelSize& size) {
  perf::FittedModel model = BootstrapPerfModel(inputs_.model_name, size.params, size.blocks);
  if (inputs_.request.model_blocks == 0) inputs_.request.model_blocks = size.blocks;
  char text[200];
  std::snprintf(text, sizeof text,
                "bootstrapped for %s from the agent's count (%.0f parameters, %d block(s)); its "
                "speed and parameters come from the job's own generations",
                inputs_.model_name.c_str(), size.params, size.blocks);
  inputs_.model_source = text;
  note_("performance model: " + inputs_.model_source);
  refit_.emplace(std::move(model));
}

// Rubick §4.3's online update: every generation's measured throughput (and a later window past
// the drift threshold) joins the model's points and the parameters are fitted again; the next
// launch chooses with the refitted model (the running step keeps its plan: switching costs a
// restart, which a resize pays anyway).
void GenerationPlanner::OnDrift(const DriftTrigger& trigger) {
  note_(trigger.note);
  if (!refit_ || !running_exec_) return;
  const PlanRequest& request = inputs_.request;
  if (auto why = refit_->AddMeasurement(request, running_allocation_, *running_exec_,
                                        trigger.measured)) {
    note_("performance model not refitted: " + *why);
    return;
  }
  const int refits = refit_->refits();
  note_("performance model " + refit_->Refit());
  if (refit_->refits() > refits) SaveRefitForRequeue();
  UpdateSpeedCurve();
  Result<perf::IterationTime> now =
      PredictAgentPlan(refit_->model(), request, running_allocation_, *running_exec_);
  if (now) {
    char text[160];
    std::snprintf(text, sizeof text, "the running plan %s is now predicted at %.1f samples/s",
                  running_plan_.c_str(), now->throughput);
    note_(text);
    predicted_samples_per_s_ = now->throughput;
    drift_.Repredict(now->throughput);
  }
}

void GenerationPlanner::SaveRefitForRequeue() {
  if (inputs_.checkpoint_dir.empty()) return;
  try {
    SaveRefit(inputs_.checkpoint_dir, refit_->ModelWithMeasurements());
    note_("performance model saved in " +
          (std::filesystem::path(inputs_.checkpoint_dir) / kRefitFileName).string() +
          " for a requeue");
  } catch (const std::exception& e) {
    note_(std::string("performance model not saved (a requeue starts from the configured "
                      "one): ") +
          e.what());
  }
}

void GenerationPlanner::SetMaxNodes(int max_nodes) {
  max_nodes_ = max_nodes;
  UpdateSpeedCurve();
}

// Rubick §5.2: the job's resource-sensitivity curve (the best plan's samples/s on 1 .. MAX
// nodes like this one), which elasticd's policy reads instead of its generic speedup model.
// Sent with every poll (elasticd does not save it); recomputed after a refit.
void GenerationPlanner::UpdateSpeedCurve() {
  speed_curve_.clear();
  const perf::FittedModel* model = Model();
  if (!model || max_nodes_ < 1 || env_("SLURM_ELASTIC").value_or("") != "1") return;
  const NodeAllocation per_node = AllocationFromEnv(1, env_);
  // elasticd takes at most 1,024 points, and a request at most 16 KiB: 512 numbers fit.
  constexpr int kMaxCurveNodes = 512;
  for (const NodeCurvePoint& point : NodeSensitivityCurve(*model, inputs_.request, per_node,
                                                          std::min(max_nodes_, kMaxCurveNodes))) {
    speed_curve_.push_back(point.samples_per_s);
  }
  if (speed_curve_.empty() || !(speed_curve_.back() > 0)) {
    speed_curve_.clear();
    return;
  }
  std::string text =
      "sensitivity curve (samples/s on 1.." + std::to_string(max_nodes_) + " nodes):";
  for (double rate : speed_curve_) text += " " + std::to_string(static_cast<long>(rate));
  note_(text);
}

void GenerationPlanner::AddPollFields(daemon::PollRequest& poll) const {
  if (!running_plan_.empty()) {  // the plan this launch chose (AdminComment's plan=)
    poll.running_plan = running_plan_;
    poll.predicted_samples_per_s = predicted_samples_per_s_;
  }
  if (!speed_curve_.empty()) poll.speed_curve = speed_curve_;
}

}  // namespace elastic::agent
