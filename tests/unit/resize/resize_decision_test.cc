// elasticd's live resize decision on hand-built Slurm views: grows only into nodes nobody planned
// for, shrinks (never below MIN, never the batch host) exactly when a waiting job can then start,
// honours the resize interval and Rubick's penalty for growth, and is deterministic.
#include "scheduler/policy/resize_decision.h"

#include <gtest/gtest.h>

#include "tests/unit/policy/test_cluster.h"

namespace elastic::policy {
namespace {

constexpr std::int64_t kNow = 1'000'000;

class ResizeDecisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    view_ = TestCluster(4, kNow);
    options_.min_resize_interval_s = 60;
    options_.resize_cost_s = 3;
  }

  SlurmNode& Node(const std::string& name) {
    for (SlurmNode& n : view_.nodes) {
      if (n.name == name) return n;
    }
    throw std::logic_error("no node " + name);
  }

  // A running job on `nodes` (batch host the first), started an hour ago.
  void Running(std::uint32_t id, std::vector<std::string> nodes) {
    view_.jobs.push_back(RunningOn(id, std::move(nodes), view_));
  }

  void Pending(std::uint32_t id, int nodes, std::string reason = "Resources",
               std::vector<std::string> sched = {}, std::uint32_t priority = 100) {
    SlurmJob job = PendingIn(id, nodes, std::move(reason));
    job.priority = priority;
    job.sched_nodes = std::move(sched);
    view_.jobs.push_back(job);
  }

  ElasticJob& Elastic(std::uint32_t id, int min, int max, int ests = 8) {
    jobs_.push_back(Registered(id, min, max, ests));
    return jobs_.back();
  }

  ResizeDecision Decide() { return DecideResizes(view_, jobs_, options_); }

  SlurmView view_;
  std::vector<ElasticJob> jobs_;
  ResizeDecisionOptions options_;
};

TEST_F(ResizeDecisionTest, AloneGrowsIntoEveryIdleNode) {
  Running(7, {"n1"});
  Elastic(7, 1, 4);
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  const ResizeProposal& order = decision.proposals[0];
  EXPECT_EQ(order.kind, ResizeKind::kGrow);
  EXPECT_EQ(order.from_nodes, 1);
  EXPECT_EQ(order.to_nodes, 4);
  EXPECT_EQ(order.target_nodes, (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
  EXPECT_EQ(order.changed_nodes, (std::vector<std::string>{"n2", "n3", "n4"}));
  EXPECT_NE(order.reason.find("idle"), std::string::npos);
}

TEST_F(ResizeDecisionTest, NeverGrowsPastMaxOrIntoPlannedOrReservedNodes) {
  Running(7, {"n1"});
  Elastic(7, 1, 3);
  Running(8, {"n2"});                       // a rigid job holds n2
  Pending(9, 4, "Resources", {"n3"});       // too big to start now; Slurm planned it onto n3
  SlurmReservation maint;
  maint.name = "maint";
  maint.start_time = kNow + 600;
  maint.end_time = kNow + 7200;
  maint.nodes = {"n4"};
  view_.reservations.push_back(maint);
  EXPECT_TRUE(Decide().proposals.empty());
  view_.reservations[0].start_time = kNow + 2 * options_.reservation_horizon_s;  // far away
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_EQ(decision.proposals[0].changed_nodes, (std::vector<std::string>{"n4"}));
}

TEST_F(ResizeDecisionTest, ShrinksForAWaitingJobAndNeverGrowsIntoItsNodes) {
  Running(7, {"n1", "n2", "n3", "n4"});
  Elastic(7, 1, 4);
  Pending(9, 3);
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  const ResizeProposal& order = decision.proposals[0];
  EXPECT_EQ(order.kind, ResizeKind::kShrink);
  EXPECT_EQ(order.to_nodes, 1);
  EXPECT_EQ(order.target_nodes, (std::vector<std::string>{"n1"}));  // the batch host stays
  EXPECT_NE(order.reason.find("pending job 9"), std::string::npos);
}

TEST_F(ResizeDecisionTest, ShrinksOnlyWhatIsMissingAndUsesIdleNodesFirst) {
  Running(7, {"n1", "n2", "n3"});
  Elastic(7, 1, 4).last_resize = kNow - 1;  // the interval does not hold back a give-back
  Pending(9, 2);
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_EQ(decision.proposals[0].to_nodes, 2);  // n4 idle + one released
}

// Step 1 prices a released node by the devices the job keeps: job 8 on two 4-GPU nodes loses
// less going to one (8 -> 4 GPUs) than job 7 on two CPU nodes (2 -> 1 device), so job 8 gives
// a node to the waiting job; with CPU nodes only the losses tie and the lower job id gives.
TEST_F(ResizeDecisionTest, StepOneShrinksTheJobThatLosesLeastOnItsDevices) {
  Running(7, {"n3", "n4"});
  Elastic(7, 1, 4);
  Running(8, {"n1", "n2"});
  Elastic(8, 1, 4);
  Pending(9, 1);
  ResizeDecision cpus = Decide();
  ASSERT_EQ(cpus.proposals.size(), 1u);
  EXPECT_EQ(cpus.proposals[0].job_id, 7u);
  Node("n1").devices = 4;
  Node("n2").devices = 4;
  ResizeDecision gpus = Decide();
  ASSERT_EQ(gpus.proposals.size(), 1u);
  EXPECT_EQ(gpus.proposals[0].job_id, 8u);
  EXPECT_EQ(gpus.proposals[0].kind, ResizeKind::kShrink);
  EXPECT_EQ(gpus.proposals[0].target_nodes, (std::vector<std::string>{"n1"}));
}

// On 4-GPU nodes job 7 holds 2 of n1's GPUs (cons_tres shares the node): elasticd does not grow
// it into the idle nodes, and says why. Holding all 4 as gres (or the node by --exclusive, which
// allocates its gres too) it grows by a requeue, as Slurm 22.05 refuses to merge an expansion
// into a job with allocated GRES. With its GPU count unknown, or without GPUs on CPU nodes (one
// device each), it grows by an expansion job as before; with 1 GPU per node held as gres, by a
// requeue.
TEST_F(ResizeDecisionTest, AJobOnGpuNodesGrowsByRequeueWhenItHoldsGres) {
  for (SlurmNode& node : view_.nodes) node.devices = 4;
  Running(7, {"n1"});
  Elastic(7, 1, 4);
  view_.jobs.back().gpus = 2;
  ResizeDecision held = Decide();
  EXPECT_TRUE(held.proposals.empty());
  ASSERT_EQ(held.held_back.size(), 1u);
  EXPECT_NE(held.held_back[0].reason.find("holds 2 of the 4 GPUs of its 1 node(s): elasticd "
                                          "grows only jobs that hold every GPU of their nodes"),
            std::string::npos);
  auto grown = [&](int gpus, bool exclusive) {
    view_.jobs.back().gpus = gpus;
    view_.jobs.back().exclusive = exclusive;
    ResizeDecision decision = Decide();
    EXPECT_EQ(decision.proposals.size(), 1u) << gpus;
    if (decision.proposals.size() != 1) return ResizeProposal{};
    EXPECT_EQ(decision.proposals[0].to_nodes, 2) << gpus;  // its 8 ESTs fill two 4-GPU nodes
    return decision.proposals[0];
  };
  EXPECT_TRUE(grown(4, false).via_requeue);
  EXPECT_TRUE(grown(2, true).via_requeue);
  EXPECT_FALSE(grown(-1, true).via_requeue);
  for (SlurmNode& node : view_.nodes) node.devices = 1;
  ResizeDecision cpu = Decide();  // gpus -1, one device per node: grows to MAX
  ASSERT_EQ(cpu.proposals.size(), 1u);
  EXPECT_FALSE(cpu.proposals[0].via_requeue);
  view_.jobs.back().gpus = 1;
  cpu = Decide();
  ASSERT_EQ(cpu.proposals.size(), 1u);
  EXPECT_TRUE(cpu.proposals[0].via_requeue);
}

// A requeue gives the job's own node back before it starts again: job 8, waiting for 2 nodes,
// could then start on n1 and the idle n2 ahead of it, so job 7 (holding n1's GPUs as gres) is
// held at its size while job 8 waits. A job waiting for all 4 nodes could not start anyway
// (n3 and n4 are busy), and job 7 grows onto n2.
TEST_F(ResizeDecisionTest, AGrowByRequeueWaitsWhileAWaitingJobCouldTakeTheNodesMeanwhile) {
  for (SlurmNode& node : view_.nodes) node.devices = 4;
  Running(7, {"n1"});
  Elastic(7, 1, 4);
  view_.jobs.back().gpus = 4;
  Running(9, {"n3", "n4"});
  Pending(8, 2);
  options_.preempt_for_rigid = false;  // (else job 7, at its MIN, is requeued for job 8)
  ResizeDecision held = Decide();
  EXPECT_TRUE(held.proposals.empty());
  ASSERT_EQ(held.held_back.size(), 1u);
  EXPECT_NE(held.held_back[0].reason.find("grows by a requeue, and waiting job 8 could take its "
                                          "nodes meanwhile"),
            std::string::npos)
      << held.held_back[0].reason;
  view_.jobs.back().min_nodes = 4;
  ResizeDecision grown = Decide();
  ASSERT_EQ(grown.proposals.size(), 1u);
  EXPECT_TRUE(grown.proposals[0].via_requeue);
  EXPECT_EQ(grown.proposals[0].target_nodes, (std::vector<std::string>{"n1", "n2"}));
  view_.jobs.front().requeue = false;  // --no-requeue: it cannot grow at all
  ResizeDecision no_requeue = Decide();
  EXPECT_TRUE(no_requeue.proposals.empty());
  ASSERT_EQ(no_requeue.held_back.size(), 1u);
  EXPECT_NE(no_requeue.held_back[0].reason.find("submitted with --no-requeue"), std::string::npos);
}

// Held from growth, such a job still gives nodes back for a waiting job: Slurm started job 7's
// -N 1-4 on all four nodes with 2 of each node's 4 GPUs, and a job waiting for a node gets one.
TEST_F(ResizeDecisionTest, AJobHoldingPartOfAGpuNodeStillGivesBackForAWaitingJob) {
  for (SlurmNode& node : view_.nodes) node.devices = 4;
  Running(7, {"n1", "n2", "n3", "n4"});
  Elastic(7, 1, 4);
  view_.jobs.back().gpus = 8;
  Pending(9, 1);
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_EQ(decision.proposals[0].kind, ResizeKind::kShrink);
  EXPECT_EQ(decision.proposals[0].to_nodes, 3);
}

TEST_F(ResizeDecisionTest, NoShrinkWhenTheWaitingJobCannotStartAnyway) {
  Running(7, {"n1", "n2"});
  Elastic(7, 2, 4);     // nothing above MIN
  Running(8, {"n3"});
  Pending(9, 3);
  options_.preempt_for_rigid = false;
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);  // no shrink; n4 is planned for nobody, so job 7 grows
  EXPECT_EQ(decision.proposals[0].kind, ResizeKind::kGrow);
  EXPECT_EQ(decision.proposals[0].changed_nodes, (std::vector<std::string>{"n4"}));
  // By default the rigid job 9, Slurm's next, has job 7 requeued: its 2 nodes and n4 start it.
  options_.preempt_for_rigid = true;
  decision = Decide();
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job_id, 7u);
  EXPECT_TRUE(decision.proposals.empty());
}

TEST_F(ResizeDecisionTest, JobWaitingOnDependencyIsIgnored) {
  Running(7, {"n1", "n2", "n3", "n4"});
  Elastic(7, 1, 4);
  Pending(9, 3, "Dependency");
  EXPECT_TRUE(Decide().proposals.empty());
}

TEST_F(ResizeDecisionTest, AWaitingJobThatFitsClaimsIdleNodesFromGrowth) {
  Running(7, {"n1"});
  Elastic(7, 1, 4);
  Pending(9, 2, "Priority");
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_EQ(decision.proposals[0].to_nodes, 2);  // 3 idle, 2 claimed by job 9
}

TEST_F(ResizeDecisionTest, ShrinkInFlightIsCountedSoNoSecondJobShrinks) {
  Running(7, {"n1", "n2"});
  Running(8, {"n3", "n4"});
  Elastic(7, 1, 4).busy = true;
  jobs_.back().releasing = {"n2"};
  Elastic(8, 1, 4);
  Pending(9, 1);
  EXPECT_TRUE(Decide().proposals.empty());
}

TEST_F(ResizeDecisionTest, GrowInFlightKeepsItsNodesFromOthers) {
  Running(7, {"n1"});
  Running(8, {"n2"});
  Elastic(7, 1, 4).busy = true;
  jobs_.back().adding = {"n3", "n4"};
  Elastic(8, 1, 4);
  EXPECT_TRUE(Decide().proposals.empty());
}

TEST_F(ResizeDecisionTest, GrowthWaitsForTheIntervalAndThePenaltyRule) {
  Running(7, {"n1"});
  Elastic(7, 1, 4).last_resize = kNow - 10;
  ResizeDecision decision = Decide();
  EXPECT_TRUE(decision.proposals.empty());
  ASSERT_EQ(decision.held_back.size(), 1u);
  EXPECT_NE(decision.held_back[0].reason.find("interval"), std::string::npos);

  jobs_[0].last_resize = 0;
  view_.jobs[0].start_time = kNow - 60;  // (60 - 1*3)/60 = 0.95 < 0.97
  decision = Decide();
  EXPECT_TRUE(decision.proposals.empty());
  ASSERT_EQ(decision.held_back.size(), 1u);
  EXPECT_NE(decision.held_back[0].reason.find("penalty"), std::string::npos);
  view_.jobs[0].start_time = kNow - 100;  // (100 - 3)/100 = 0.97
  EXPECT_EQ(Decide().proposals.size(), 1u);
}

TEST_F(ResizeDecisionTest, GreedyGrowPrefersTheLargerSpeedupPerNode) {
  Running(7, {"n1"});
  Running(8, {"n2"});
  Elastic(7, 1, 4, /*ests=*/8);
  Elastic(8, 1, 2, /*ests=*/1);  // one EST: a second node adds nothing
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_EQ(decision.proposals[0].job_id, 7u);
  EXPECT_EQ(decision.proposals[0].to_nodes, 3);
}

TEST_F(ResizeDecisionTest, SizesThatAddNoSpeedupAreSkipped) {
  // 4 ESTs: 3 nodes run as slowly as 2 (ceil(4/3) = 2 ESTs per node), so no grow to 3 alone.
  Running(7, {"n1", "n2"});
  Running(8, {"n4"});
  Elastic(7, 1, 4, /*ests=*/4);
  EXPECT_TRUE(Decide().proposals.empty());
  EXPECT_LT(NodeSpeedup(4, 3, 0.02), NodeSpeedup(4, 4, 0.02));
  EXPECT_LE(NodeSpeedup(4, 3, 0.02), NodeSpeedup(4, 2, 0.02) + 1e-12);
}

TEST_F(ResizeDecisionTest, UnavailableNodesAndBusyJobsTakeNoPart) {
  Running(7, {"n1"});
  Elastic(7, 1, 4);
  Node("n2").available = false;
  Node("n3").available = false;
  ResizeDecision decision = Decide();
  ASSERT_EQ(decision.proposals.size(), 1u);
  EXPECT_EQ(decision.proposals[0].changed_nodes, (std::vector<std::string>{"n4"}));
  jobs_[0].busy = true;
  EXPECT_TRUE(Decide().proposals.empty());
}

TEST_F(ResizeDecisionTest, SameInputSameOrders) {
  Running(7, {"n1", "n2"});
  Running(8, {"n3", "n4"});
  Elastic(7, 1, 4);
  Elastic(8, 1, 4);
  Pending(9, 1);
  ResizeDecision a = Decide(), b = Decide();
  ASSERT_EQ(a.proposals.size(), 1u);
  ASSERT_EQ(b.proposals.size(), 1u);
  EXPECT_EQ(a.proposals[0].job_id, b.proposals[0].job_id);
  EXPECT_EQ(a.proposals[0].target_nodes, b.proposals[0].target_nodes);
}

}  // namespace
}  // namespace elastic::policy
