// The supervisor's torch-free copies of agent facts, checked against the agent itself: the
// plans it predicts are the plans ResolveExecutionPlan runs, and the built-in model table holds
// the registry models' real parameter and block counts. Built only with the agent (LibTorch).
#include <gtest/gtest.h>

#include "agent/config/job_config.h"
#include "agent/model/model.h"
#include "agent/model/registry.h"
#include "agent/plan/execution_plan.h"
#include "perf/rubick/default_perf_model.h"
#include "perf/rubick/plan_selection.h"

namespace elastic::agent {
namespace {

TEST(PlanSelectionAgent, PredictedPlansAreThePlansTheAgentRuns) {
  for (Plan word : {Plan::kDp, Plan::kGa, Plan::kGc, Plan::kZeroDp, Plan::kZeroOffload,
                    Plan::kPp, Plan::kTp}) {
    for (std::int64_t ests : {1, 5, 8}) {
      for (int ranks = 1; ranks <= ests; ++ranks) {
        JobConfig config;
        config.train.plan = word;
        config.train.ests = ests;
        config.train.cpu_threads = 3;
        EXPECT_EQ(AgentExecutionPlan(word, ranks, ests, 3), ResolveExecutionPlan(config, ranks))
            << ToString(word) << " E=" << ests << " W=" << ranks;
      }
    }
  }
}

TEST(PlanSelectionAgent, BuiltInModelsMatchTheRegistry) {
  for (const char* name : {"fmnist_cnn", "gpt"}) {
    std::shared_ptr<Model> model = MakeModel(name);
    EXPECT_EQ(BuiltInModelShape(name).blocks, model->BlockCount()) << name;
    std::optional<perf::FittedModel> described = BuiltInPerfModel(name);
    if (!described) continue;  // no timing description (gpt): runs its requested plan
    std::int64_t params = 0;
    for (const auto& p : model->parameters()) params += p.numel();
    EXPECT_EQ(described->model.params, static_cast<double>(params)) << name;
    EXPECT_EQ(described->model.layers, model->BlockCount()) << name;
  }
}

}  // namespace
}  // namespace elastic::agent
