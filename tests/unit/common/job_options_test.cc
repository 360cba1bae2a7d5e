// Tests for the job-option vocabulary shared by plugin, agent and daemon.
#include "common/job_options.h"

#include <gtest/gtest.h>

namespace elastic {
namespace {

TEST(JobOptions, EveryPlanRoundTrips) {
  for (Plan plan : {Plan::kAuto, Plan::kDp, Plan::kGa, Plan::kGc, Plan::kZeroDp,
                    Plan::kZeroOffload, Plan::kTp, Plan::kPp, Plan::kBurst}) {
    auto parsed = ParsePlan(ToString(plan));
    ASSERT_TRUE(parsed) << ToString(plan);
    EXPECT_EQ(*parsed.value, plan);
  }
}

TEST(JobOptions, ClassesAndLevelsRoundTrip) {
  for (SlaClass c : {SlaClass::kGuaranteed, SlaClass::kBestEffort, SlaClass::kBackground}) {
    EXPECT_EQ(*ParseSlaClass(ToString(c)).value, c);
  }
  for (Determinism d : {Determinism::kD0, Determinism::kD1, Determinism::kD2,
                        Determinism::kStatistical}) {
    EXPECT_EQ(*ParseDeterminism(ToString(d)).value, d);
  }
}

TEST(JobOptions, RejectionsNameValueAndChoices) {
  auto plan = ParsePlan("DP");  // case matters: Slurm flags are lower-case
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error, "invalid value \"DP\": expected one of " + std::string(PlanChoices()));
  EXPECT_FALSE(ParseSlaClass("besteffort"));
  EXPECT_FALSE(ParseDeterminism("d3"));
}

TEST(JobOptions, PositiveCountTable) {
  for (const char* bad : {"", "0", "-1", "+3", " 3", "3 ", "3x", "1.5", "1048577",
                          "99999999999999999999"}) {
    auto parsed = ParsePositiveCount(bad);
    EXPECT_FALSE(parsed) << "accepted \"" << bad << "\"";
    EXPECT_NE(parsed.error.find("expected an integer from 1 to 1048576"), std::string::npos);
  }
  EXPECT_EQ(*ParsePositiveCount("1").value, 1);
  EXPECT_EQ(*ParsePositiveCount("1048576").value, 1048576);
}

TEST(JobOptions, TensorParallelOnlyUnderStatistical) {
  EXPECT_FALSE(PlanAllowedUnder(Plan::kTp, Determinism::kD1));
  EXPECT_FALSE(PlanAllowedUnder(Plan::kTp, Determinism::kD2));
  EXPECT_TRUE(PlanAllowedUnder(Plan::kTp, Determinism::kStatistical));
  EXPECT_TRUE(PlanAllowedUnder(Plan::kZeroOffload, Determinism::kD1));
  EXPECT_TRUE(PlanAllowedUnder(Plan::kAuto, Determinism::kD2));
}

}  // namespace
}  // namespace elastic
