// Naming, family and determinism class of execution plans.
#include "perf/rubick/plan.h"

namespace elastic::perf {

std::string Describe(const ExecutionPlan& plan) {
  std::string text = "dp=" + std::to_string(plan.dp);
  if (plan.tp > 1) text += "+tp=" + std::to_string(plan.tp);
  if (plan.pp > 1)
    text += "+pp=" + std::to_string(plan.pp) + ",mb=" + std::to_string(plan.micro_batches);
  if (plan.ga_steps > 1) text += "+ga=" + std::to_string(plan.ga_steps);
  if (plan.gc) text += "+gc";
  if (plan.zero_stage > 0) text += "+zero-" + std::to_string(plan.zero_stage);
  if (plan.offload) text += "+offload,c=" + std::to_string(plan.cpu_threads);
  return text;
}

Plan Family(const ExecutionPlan& plan) {
  if (plan.tp > 1) return Plan::kTp;
  if (plan.pp > 1) return Plan::kPp;
  if (plan.offload) return Plan::kZeroOffload;
  if (plan.zero_stage > 0) return Plan::kZeroDp;
  if (plan.gc) return Plan::kGc;
  if (plan.ga_steps > 1) return Plan::kGa;
  return Plan::kDp;
}

bool BitwiseSafe(const ExecutionPlan& plan) { return plan.tp == 1; }

bool AllowedUnder(const ExecutionPlan& plan, Determinism level) {
  return BitwiseSafe(plan) || level == Determinism::kStatistical;
}

}  // namespace elastic::perf
