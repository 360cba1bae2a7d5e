// Torch-free parts of the execution plans: ZeRO's parameter-aligned shards and how train.plan
// resolves into an ExecutionPlan for a world size.
#include <gtest/gtest.h>

#include <vector>

#include "agent/plan/execution_plan.h"
#include "agent/plan/parameter_shards.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// fmnist_cnn's parameter sizes, in named_parameters() order.
const std::vector<std::int64_t> kCnn = {400, 16, 12800, 32, 65536, 128, 1280, 10};

TEST(SplitParameters, ShardsAreContiguousRunsOfWholeParametersCoveringEverything) {
  for (int parts = 1; parts <= 10; ++parts) {
    const std::vector<ParameterShard> shards = SplitParameters(kCnn, parts);
    ASSERT_EQ(shards.size(), static_cast<std::size_t>(parts));
    EXPECT_EQ(shards.front().first, 0u);
    EXPECT_EQ(shards.front().begin, 0);
    EXPECT_EQ(shards.back().last, kCnn.size());
    EXPECT_EQ(shards.back().end, 80202);
    for (std::size_t k = 1; k < shards.size(); ++k) {
      EXPECT_EQ(shards[k].first, shards[k - 1].last) << parts;
      EXPECT_EQ(shards[k].begin, shards[k - 1].end) << parts;
    }
  }
}

TEST(SplitParameters, BoundariesAreTheParameterStartsNearestToEvenSplits) {
  // 80202 floats: thirds at 26734 and 53468; parameter starts 13248 and 78784 are nearest.
  const std::vector<ParameterShard> three = SplitParameters(kCnn, 3);
  EXPECT_EQ(three[0].last, 4u);
  EXPECT_EQ(three[1].last, 5u);  // fc1.weight alone
  EXPECT_EQ(three[1].size(), 65536);
  // Equal sizes split evenly; more parts than parameters leave empty shards.
  const std::vector<ParameterShard> even =
      SplitParameters(std::vector<std::int64_t>{5, 5, 5, 5}, 2);
  EXPECT_EQ(even[0].last, 2u);
  const std::vector<ParameterShard> many = SplitParameters(std::vector<std::int64_t>{7}, 3);
  EXPECT_EQ(many[0].size() + many[1].size() + many[2].size(), 7);
}

TEST(ResolveExecutionPlan, NamesTheDegreesAndRefusesWhatTheAgentCannotRun) {
  JobConfig config;
  config.train.ests = 8;
  config.train.global_batch = 64;
  config.train.plan = Plan::kZeroOffload;
  config.train.cpu_threads = 4;
  perf::ExecutionPlan plan = ResolveExecutionPlan(config, 3);
  EXPECT_EQ(plan.dp, 3);
  EXPECT_EQ(plan.ga_steps, 3);  // ceil(8 / 3) ESTs on the busiest rank
  EXPECT_EQ(plan.zero_stage, 2);
  EXPECT_TRUE(plan.offload);
  EXPECT_EQ(plan.cpu_threads, 4);
  EXPECT_EQ(DescribeExecutionPlan(config, plan), "zero-offload(dp=3+ga=3+zero-2+offload,c=4)");
  config.train.plan = Plan::kGa;
  EXPECT_EQ(DescribeExecutionPlan(config, ResolveExecutionPlan(config, 2)), "ga(dp=2+ga=4)");
  config.train.plan = Plan::kGc;
  EXPECT_TRUE(ResolveExecutionPlan(config, 8).gc);
  config.train.plan = Plan::kAuto;
  EXPECT_EQ(DescribeExecutionPlan(config, ResolveExecutionPlan(config, 8)), "dp(dp=8)");
  config.train.plan = Plan::kPp;  // stages over the ranks, the ESTs as micro-batches
  EXPECT_EQ(DescribeExecutionPlan(config, ResolveExecutionPlan(config, 3)), "pp(dp=1+pp=3,mb=8)");
  EXPECT_EQ(DescribeExecutionPlan(config, ResolveExecutionPlan(config, 1)), "pp(dp=1+ga=8)");
  config.train.plan = Plan::kTp;  // one TP group over all ranks, every EST accumulated
  EXPECT_EQ(DescribeExecutionPlan(config, ResolveExecutionPlan(config, 2)), "tp(dp=1+tp=2+ga=8)");
  EXPECT_EQ(DescribeExecutionPlan(config, ResolveExecutionPlan(config, 1)), "tp(dp=1+ga=8)");
  config.train.plan = Plan::kBurst;
  EXPECT_THROW(ResolveExecutionPlan(config, 2), ConfigError);
}

TEST(HostedEstsUnder, PipelineStageZeroFeedsEveryEst) {
  perf::ExecutionPlan plan;
  plan.pp = 3;
  EXPECT_EQ(HostedEstsUnder(plan, 8, 0, 3), (EstRange{0, 8}));
  EXPECT_EQ(HostedEstsUnder(plan, 8, 2, 3).size(), 0);
  plan.pp = 1;
  plan.dp = 3;
  EXPECT_EQ(HostedEstsUnder(plan, 8, 1, 3), (EstRange{2, 5}));
}

TEST(HostedEstsUnder, EveryRankOfATensorParallelGroupRunsEveryEst) {
  perf::ExecutionPlan plan;
  plan.tp = 2;
  EXPECT_EQ(HostedEstsUnder(plan, 8, 0, 2), (EstRange{0, 8}));
  EXPECT_EQ(HostedEstsUnder(plan, 8, 1, 2), (EstRange{0, 8}));
}

}  // namespace
}  // namespace elastic::agent
