// SLA classes in elasticd's live resize decision (resize_decision.h step 1, sla_quota.h):
// guaranteed jobs within their account's quota are served first, preempt best-effort elastic
// jobs (the fewest, whole) when shrinking alone cannot start them, never preempt guaranteed or
// busy jobs, and keep growth off the nodes they wait for; a rigid job Slurm starts next preempts
// settled best-effort elastic jobs too; quotas claim minimums oldest first.
#include <gtest/gtest.h>

#include "scheduler/policy/resize_decision.h"
#include "scheduler/policy/sla_quota.h"
#include "tests/unit/policy/test_cluster.h"

namespace elastic::policy {
namespace {

constexpr std::int64_t kNow = 1'000'000;

class SlaDecisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    view_ = TestCluster(6, kNow);
    options_.min_resize_interval_s = 60;
    options_.resize_cost_s = 3;
  }

  SlurmJob& Running(std::uint32_t id, std::vector<std::string> nodes,
                    SlaClass sla_class = SlaClass::kBestEffort, std::string account = "a") {
    view_.jobs.push_back(RunningOn(id, std::move(nodes), view_));
    view_.jobs.back().sla_class = sla_class;
    view_.jobs.back().account = std::move(account);
    return view_.jobs.back();
  }

  SlurmJob& Waiting(std::uint32_t id, int nodes, SlaClass sla_class, std::uint32_t priority = 100,
                    std::string account = "a") {
    SlurmJob job = PendingIn(id, nodes);
    job.priority = priority;
    job.sla_class = sla_class;
    job.account = std::move(account);
    view_.jobs.push_back(job);
    return view_.jobs.back();
  }

  // 24 ESTs: every size up to 6 nodes but 5 divides them, so growth always gains.
  ElasticJob& Elastic(std::uint32_t id, int min, int max) {
    jobs_.push_back(Registered(id, min, max, 24));
    return jobs_.back();
  }

  ResizeDecision Decide() { return DecideResizes(view_, jobs_, options_); }

  SlurmView view_;
  std::vector<ElasticJob> jobs_;
  ResizeDecisionOptions options_;
};

std::vector<std::uint32_t> Preempted(const ResizeDecision& decision) {
  std::vector<std::uint32_t> ids;
  for (const Preemption& p : decision.preemptions) ids.push_back(p.job_id);
  return ids;
}

TEST_F(SlaDecisionTest, AGuaranteedJobThatShrinkingCannotStartPreemptsTheBestEffortJobWhole) {
  Running(7, {"n1", "n2", "n3", "n4", "n5", "n6"});
  Elastic(7, 3, 6);  // shrinking frees 3 nodes; the guaranteed job needs 6
  Waiting(9, 6, SlaClass::kGuaranteed);
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job_id, 7u);
  EXPECT_EQ(decision.preemptions[0].nodes,
            (std::vector<std::string>{"n1", "n2", "n3", "n4", "n5", "n6"}));  // batch host too
  EXPECT_NE(decision.preemptions[0].reason.find("guaranteed job 9"), std::string::npos);
  EXPECT_TRUE(decision.proposals.empty());  // no shrink order for a job being requeued
}

TEST_F(SlaDecisionTest, ABestEffortElasticJobWaitingTheSameWayPreemptsNobody) {
  Running(7, {"n1", "n2", "n3", "n4", "n5", "n6"});
  Elastic(7, 3, 6);
  Waiting(9, 6, SlaClass::kBestEffort).elastic = true;
  EXPECT_TRUE(Decide().preemptions.empty());
}

// Elastic best-effort jobs use what Slurm's rigid queue leaves (job_submit.lua's nice) and give
// it back: a rigid job Slurm starts next that shrinking alone cannot start preempts them, as a
// guaranteed one does, but only jobs that have held their nodes for the minimum resize interval.
TEST_F(SlaDecisionTest, ARigidJobSlurmStartsNextPreemptsSettledBestEffortElasticJobs) {
  Running(7, {"n1", "n2", "n3", "n4"});
  Elastic(7, 4, 6);  // at its minimum
  Running(8, {"n5", "n6"}, SlaClass::kGuaranteed);
  Elastic(8, 2, 6);
  Waiting(9, 4, SlaClass::kBestEffort);  // rigid: no bounds record
  ResizeDecision decision = Decide();
  EXPECT_EQ(Preempted(decision), (std::vector<std::uint32_t>{7}));  // never the guaranteed 8
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_NE(decision.preemptions[0].reason.find("rigid job 9 (4 nodes, Slurm's next)"),
            std::string::npos)
      << decision.preemptions[0].reason;
  view_.jobs[0].start_time = kNow - 30;  // started within the interval: kept
  EXPECT_TRUE(Decide().preemptions.empty());
  view_.jobs[0].start_time = kNow - 3600;
  jobs_[0].last_resize = kNow - 30;  // resized within the interval: kept
  EXPECT_TRUE(Decide().preemptions.empty());
  jobs_[0].last_resize = 0;
  options_.preempt_for_rigid = false;
  EXPECT_TRUE(Decide().preemptions.empty());
  options_.preempt_for_rigid = true;
  options_.preempt_best_effort = false;  // preemption off altogether
  EXPECT_TRUE(Decide().preemptions.empty());
}

TEST_F(SlaDecisionTest, ShrinkingComesFirstWhenItIsEnough) {
  Running(7, {"n1", "n2", "n3", "n4", "n5", "n6"});
  Elastic(7, 1, 6);
  Waiting(9, 5, SlaClass::kGuaranteed);
  ResizeDecision decision = Decide();
  EXPECT_TRUE(decision.preemptions.empty());
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_EQ(decision.proposals[0].target_nodes, (std::vector<std::string>{"n1"}));
}

TEST_F(SlaDecisionTest, TheFewestJobsGoTheSmallestThatCompletesTheNeed) {
  Running(5, {"n1", "n2", "n3", "n4"});
  Elastic(5, 4, 6);  // at its minimum: only preemption frees its nodes
  Running(6, {"n5", "n6"});
  Elastic(6, 2, 6);
  Waiting(9, 2, SlaClass::kGuaranteed);
  ResizeDecision decision = Decide();
  EXPECT_EQ(Preempted(decision), (std::vector<std::uint32_t>{6}));
  Waiting(10, 6, SlaClass::kGuaranteed, 50);  // needs both: the larger goes first
  view_.jobs.erase(view_.jobs.end() - 2);
  EXPECT_EQ(Preempted(Decide()), (std::vector<std::uint32_t>{5, 6}));
}

// Slurm would give the freed nodes to the higher-priority job 8: no preemption for job 9 then
// (the preempted job would take its nodes back at its next start, and be preempted again).
TEST_F(SlaDecisionTest, OnlyTheJobSlurmStartsNextPreempts) {
  Running(7, {"n1", "n2", "n3", "n4", "n5", "n6"});
  Elastic(7, 3, 6);
  Waiting(8, 6, SlaClass::kBestEffort, 1000).elastic = true;
  Waiting(9, 6, SlaClass::kGuaranteed, 10);
  EXPECT_TRUE(Decide().preemptions.empty());
  view_.jobs[1].priority = 1;  // now job 9 is Slurm's next start
  EXPECT_EQ(Preempted(Decide()), (std::vector<std::uint32_t>{7}));
}

TEST_F(SlaDecisionTest, GuaranteedAndBusyJobsAreNeverPreempted) {
  Running(7, {"n1", "n2", "n3"}, SlaClass::kGuaranteed);
  Elastic(7, 3, 6);
  Running(8, {"n4", "n5", "n6"});
  Elastic(8, 3, 6).busy = true;  // an order in flight
  Waiting(9, 4, SlaClass::kGuaranteed);
  EXPECT_TRUE(Decide().preemptions.empty());
}

TEST_F(SlaDecisionTest, NoPreemptionWhenItIsOffAndNoGrowthOntoWhatTheGuaranteedJobWaitsFor) {
  Running(7, {"n1", "n2", "n3", "n4"});
  Elastic(7, 4, 6);
  Waiting(9, 4, SlaClass::kGuaranteed);  // n5, n6 idle: not enough
  options_.preempt_best_effort = false;
  ResizeDecision decision = Decide();
  EXPECT_TRUE(decision.preemptions.empty());
  EXPECT_TRUE(decision.proposals.empty()) << decision.proposals[0].reason;  // 7 may not grow
  view_.jobs.back().sla_class = SlaClass::kBestEffort;  // the same wait, best-effort: 7 grows
  ASSERT_EQ(Decide().proposals.size(), 1u);
}

TEST_F(SlaDecisionTest, AGuaranteedJobOverItsAccountsQuotaIsServedAsBestEffort) {
  Running(7, {"n1", "n2", "n3", "n4", "n5", "n6"});
  Elastic(7, 3, 6);
  Waiting(9, 6, SlaClass::kGuaranteed, 100, "physics").elastic = true;  // (a rigid one preempts)
  options_.quotas = std::map<std::string, int>{{"physics", 5}};
  EXPECT_TRUE(Decide().preemptions.empty());
  options_.quotas = std::map<std::string, int>{{"physics", 6}};
  EXPECT_EQ(Preempted(Decide()), (std::vector<std::uint32_t>{7}));
}

TEST_F(SlaDecisionTest, GuaranteedJobsWithinQuotaAreServedBeforeHigherPriorityOnes) {
  Running(7, {"n1", "n2", "n3", "n4"});
  Elastic(7, 2, 6);
  Waiting(8, 4, SlaClass::kBestEffort, 1000);  // Slurm's priority puts it first
  Waiting(9, 4, SlaClass::kGuaranteed, 10);
  ResizeDecision decision = Decide();
  // 2 idle + 2 released serve only one of them: the guaranteed job, by shrinking (no preemption).
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_NE(decision.proposals[0].reason.find("pending job 9"), std::string::npos)
      << decision.proposals[0].reason;
  EXPECT_TRUE(decision.preemptions.empty());
}

TEST(QuotaStandingTest, RunningJobsClaimFirstInStartOrderThenWaitingOnesByPriority) {
  SlurmView view = TestCluster(8, kNow, 4, /*devices=*/2);
  auto run = [&](std::uint32_t id, std::vector<std::string> nodes, std::int64_t start) {
    view.jobs.push_back(RunningOn(id, std::move(nodes), view));
    view.jobs.back().sla_class = SlaClass::kGuaranteed;
    view.jobs.back().account = "a";
    view.jobs.back().start_time = start;
  };
  run(3, {"n1", "n2"}, kNow - 10);   // newer: claims after job 4
  run(4, {"n3"}, kNow - 100);        // 2 devices
  SlurmJob waiting = PendingIn(5, 1, "Priority");
  waiting.sla_class = SlaClass::kGuaranteed;
  waiting.account = "a";
  view.jobs.push_back(waiting);
  view.jobs.push_back(waiting);
  view.jobs.back().job_id = 6;
  view.jobs.back().account = "b";  // no quota in the table
  view.jobs.push_back(waiting);
  view.jobs.back().job_id = 7;
  view.jobs.back().sla_class = SlaClass::kBestEffort;  // not guaranteed: no standing

  // Job 3's MIN is 1 node (2 devices) by the registry; job 4 claims 2, job 3 2, job 5 2.
  const std::map<std::uint32_t, int> min_nodes{{3, 1}};
  auto standing = QuotaStanding(view, min_nodes, std::map<std::string, int>{{"a", 4}});
  EXPECT_EQ(standing, (std::map<std::uint32_t, bool>{{3, true}, {4, true}, {5, false},
                                                     {6, false}}));
  standing = QuotaStanding(view, {}, std::map<std::string, int>{{"a", 5}});  // 3 claims 4
  EXPECT_EQ(standing.at(3), false);
  EXPECT_EQ(standing.at(5), true);
  standing = QuotaStanding(view, min_nodes, std::nullopt);  // no table: all within
  EXPECT_EQ(standing, (std::map<std::uint32_t, bool>{{3, true}, {4, true}, {5, true},
                                                     {6, true}}));
}

}  // namespace
}  // namespace elastic::policy
