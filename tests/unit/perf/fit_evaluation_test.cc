// Choice of fitting points (3 ZeRO-Offload, §4.3) and the relative prediction errors.
#include "perf/rubick/fit_evaluation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/perf/perf_fixtures.h"

namespace elastic::perf {
namespace {

using testing::OneNode;
using testing::RoundParams;

ModelDesc Cnn() {
  ModelDesc m;
  m.params = 1e6;
  m.layers = 4;
  m.global_batch = 192;
  m.fwd_s_per_sample = 1e-4;
  return m;
}

ProfiledRun Run(const std::string& label, int workers, int threads, ExecutionPlan plan) {
  ProfiledRun run;
  run.label = label;
  run.intra_threads = threads;
  plan.dp = workers;
  run.point.plan = plan;
  run.point.resources = OneNode(workers, workers);
  run.point.throughput = 1000;
  return run;
}

ExecutionPlan Offload(int c) {
  ExecutionPlan plan;
  plan.zero_stage = 2;
  plan.offload = true;
  plan.cpu_threads = c;
  return plan;
}

ExecutionPlan Zero() {
  ExecutionPlan plan;
  plan.zero_stage = 2;
  return plan;
}

ExecutionPlan Gc() {
  ExecutionPlan plan;
  plan.gc = true;
  return plan;
}

// File order: dp runs first, offload runs late, a repeated (family, W, threads) kind.
std::vector<ProfiledRun> Runs() {
  return {Run("dp-1", 1, 1, {}),           Run("dp-1-again", 1, 1, {}),
          Run("dp-2", 2, 1, {}),           Run("gc-1", 1, 1, Gc()),
          Run("zero-2", 2, 1, Zero()),     Run("off-1-c1", 1, 1, Offload(1)),
          Run("off-1-c1-b", 1, 1, Offload(1)), Run("off-2-c1", 2, 1, Offload(1)),
          Run("off-2-c2", 2, 1, Offload(2)),   Run("dp-1-t2", 1, 2, {})};
}

TEST(DefaultFitSplit, ThreeDistinctOffloadRunsThenDistinctKinds) {
  std::vector<ProfiledRun> runs = Runs();
  Result<FitSplit> split = DefaultFitSplit(runs, 7);
  ASSERT_TRUE(split) << split.error;
  // Offload: (1,c1) at 5, (2,c1) at 7, (2,c2) at 8 -- not 6, a repeat of 5's kind.
  // Others, one per (family, W, threads): 0, 2, 3, 4 (1 repeats 0's kind; 9 comes too late).
  EXPECT_EQ(split->train, (std::vector<int>{0, 2, 3, 4, 5, 7, 8}));
  EXPECT_EQ(split->test, (std::vector<int>{1, 6, 9}));
}

TEST(DefaultFitSplit, FillsInFileOrderWhenKindsRunOut) {
  std::vector<ProfiledRun> runs = Runs();
  Result<FitSplit> split = DefaultFitSplit(runs, 9);
  ASSERT_TRUE(split) << split.error;
  EXPECT_EQ(split->train, (std::vector<int>{0, 1, 2, 3, 4, 5, 7, 8, 9}));
  EXPECT_EQ(split->test, (std::vector<int>{6}));
}

TEST(DefaultFitSplit, RefusesTooFewPoints) {
  std::vector<ProfiledRun> runs = Runs();
  Result<FitSplit> small = DefaultFitSplit(runs, 6);
  ASSERT_FALSE(small);
  EXPECT_NE(small.error.find("at least 7 points"), std::string::npos) << small.error;
  std::vector<ProfiledRun> five(runs.begin(), runs.begin() + 5);
  Result<FitSplit> few = DefaultFitSplit(five, 7);
  ASSERT_FALSE(few);
  EXPECT_NE(few.error.find("holds 5 points"), std::string::npos) << few.error;
}

TEST(ExplicitFitSplit, TakesExactlyTheIndices) {
  std::vector<ProfiledRun> runs = Runs();
  std::vector<int> indices{9, 0, 1, 2, 3, 4, 5};
  Result<FitSplit> split = ExplicitFitSplit(runs, indices);
  ASSERT_TRUE(split) << split.error;
  EXPECT_EQ(split->train, (std::vector<int>{0, 1, 2, 3, 4, 5, 9}));
  EXPECT_EQ(split->test, (std::vector<int>{6, 7, 8}));
  std::vector<int> out_of_range{0, 1, 2, 3, 4, 5, 10};
  EXPECT_NE(ExplicitFitSplit(runs, out_of_range).error.find("index 10 is out of range"),
            std::string::npos);
  std::vector<int> twice{0, 1, 2, 3, 4, 5, 5};
  EXPECT_NE(ExplicitFitSplit(runs, twice).error.find("index 5 is given twice"),
            std::string::npos);
  std::vector<int> six{0, 1, 2, 3, 4, 5};
  EXPECT_NE(ExplicitFitSplit(runs, six).error.find("at least 7 points"), std::string::npos);
}

TEST(EvaluateFit, ErrorsAreRelativeToTheMeasurement) {
  std::vector<ProfiledRun> runs = Runs();
  const PerfParams params = RoundParams();
  // "Measured" = the model's own prediction, except two points off by +25% and -10%.
  for (ProfiledRun& run : runs) {
    Result<IterationTime> it = PredictIteration(Cnn(), run.point.resources, run.point.plan, params);
    ASSERT_TRUE(it) << it.error;
    run.point.throughput = it->throughput;
  }
  runs[1].point.throughput /= 1.25;  // predicted = 1.25 x measured
  runs[6].point.throughput /= 0.9;   // predicted = 0.9 x measured
  Result<FitSplit> split = DefaultFitSplit(runs, 7);
  ASSERT_TRUE(split);
  FitEvaluation evaluation = EvaluateFit(Cnn(), runs, *split, params);
  ASSERT_EQ(evaluation.points.size(), runs.size());
  EXPECT_NEAR(evaluation.points[1].rel_error, 0.25, 1e-12);
  EXPECT_NEAR(evaluation.points[6].rel_error, 0.10, 1e-12);
  EXPECT_FALSE(evaluation.points[1].trained);
  EXPECT_TRUE(evaluation.points[0].trained);
  // Test points 1, 6, 9: errors 0.25, 0.10, 0.
  EXPECT_NEAR(evaluation.test_avg_rel_error, 0.35 / 3, 1e-12);
  EXPECT_NEAR(evaluation.test_max_rel_error, 0.25, 1e-12);
  EXPECT_NEAR(evaluation.train_max_rel_error, 0, 1e-12);
}

}  // namespace
}  // namespace elastic::perf
