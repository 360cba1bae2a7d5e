// MakePlanStep: which PlanStep a plan runs, and the model preparation the plan needs first.
#include "agent/plan/plan_step.h"

#include "agent/model/model.h"
#include "agent/plan/burst_parallel.h"
#include "agent/plan/execution_plan.h"
#include "agent/plan/hosted_ests_step.h"
#include "agent/plan/pipeline.h"
#include "agent/plan/tensor_parallel.h"
#include "common/toml_reader.h"

namespace elastic::agent {

namespace {

// A model that cannot run the plan is refused by the plan's word whatever W is, so a job that
// runs on one rank today does not fail when it grows.
void RequirePlanFitsModel(const PlanStepContext& context) {
  const Plan word = RunPlanWord(context.config);
  const std::string plan = "train.plan: plan \"" + std::string(ToString(word)) + "\": ";
  const bool splits = word == Plan::kPp || word == Plan::kTp || word == Plan::kBurst ||
                      context.plan.pp > 1 || context.plan.tp > 1;
  if (auto why = context.model.CannotSplitAcrossRanks(); splits && why) {
    throw ConfigError(plan + *why);
  }
  if (auto why = context.model.CannotRecompute(); context.plan.gc && why) {
    throw ConfigError(plan + *why);
  }
}

}  // namespace

PlanStepSetup MakePlanStep(const PlanStepContext& context) {
  const JobConfig& config = context.config;
  const int ranks = context.world.size();
  PlanStepSetup setup;
  RequirePlanFitsModel(context);
  // Before the update is made: it takes Model::TensorParallelParameters, empty until this. Also
  // on one rank, so that a model that cannot split is refused whatever W is.
  if (RunPlanWord(config) == Plan::kTp) EnableTensorParallel(context.model, context.world);
  if (context.plan.pp > 1) {
    // Each stage updates the parameters of its own blocks, whose gradients only it holds.
    setup.update_owners = StageShards(context.model, ranks);
    setup.step =
        std::make_unique<Pipeline>(context.model, context.world, context.stash, config.train.ests);
  }
  if (RunPlanWord(config) == Plan::kBurst) {
    // Also on one rank, so that settings that do not fit the model are refused whatever W is.
    CheckBurstPlanFitsModel(context.model, config.train.burst_workers, ModelLabel(config));
    if (RunsBurstPlan(config, ranks)) {
      setup.step = std::make_unique<BurstParallel>(context.model, context.world, context.stash,
                                                   config.train.ests, config.train.burst_workers);
    }
  }
  // Every other plan, and pp or burst on one rank, where they are dp.
  if (!setup.step) {
    setup.step =
        std::make_unique<HostedEstsStep>(context.model, context.stash, context.device,
                                         context.hosted, context.fold_locally, context.plan.gc);
  }
  return setup;
}

}  // namespace elastic::agent
