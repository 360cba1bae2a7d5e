// The resize protocol of design.md §3, transition by transition.
#include "agent/supervisor/resize_state_machine.h"

#include <gtest/gtest.h>

namespace elastic::agent {
namespace {

std::vector<ActionKind> Kinds(const std::vector<Action>& actions) {
  std::vector<ActionKind> kinds;
  for (const auto& a : actions) kinds.push_back(a.kind);
  return kinds;
}

// elasticd's order for generation `generation` to `nodes` nodes (named n1, n2, ...).
ResizeOrder Order(std::uint64_t generation, int nodes) {
  ResizeOrder order;
  order.generation = generation;
  for (int i = 1; i <= nodes; ++i) order.target_nodes.push_back("n" + std::to_string(i));
  return order;
}

using K = ActionKind;
using S = SupervisorState;

TEST(ResizeStateMachine, StartLaunchesGenerationOne) {
  ResizeStateMachine m(3);
  auto actions = m.Start();
  ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kLaunchStep, K::kReport}));
  EXPECT_EQ(actions[0].nodes, 3);
  EXPECT_EQ(actions[0].generation, 1u);
  EXPECT_EQ(m.state(), S::kRunning);
  EXPECT_TRUE(m.Start().empty()) << "a second start must do nothing";
}

TEST(ResizeStateMachine, ShrinkCheckpointsBeforeReleasingNodes) {
  ResizeStateMachine m(3);
  m.Start();
  auto actions = m.OnOrder(Order(2, 1));
  ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kCheckpointStep, K::kReport}));
  EXPECT_EQ(m.state(), S::kCheckpointing);
  actions = m.OnStepExited(0, false);
  ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kShrinkAllocation, K::kReport}));
  EXPECT_EQ(actions[0].nodes, 1);
  EXPECT_EQ(m.state(), S::kResizing);
  actions = m.OnAllocationResized(true, 1);
  ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kLaunchStep, K::kReport}));
  EXPECT_EQ(actions[0].nodes, 1);
  EXPECT_EQ(actions[0].generation, 2u);
  EXPECT_FALSE(actions[0].credential_grace);
  EXPECT_EQ(m.state(), S::kRunning);
  EXPECT_EQ(m.generation(), 2u);
  EXPECT_EQ(m.nodes(), 1);
}

TEST(ResizeStateMachine, GrowAfterShrinkWaitsOutTheCredentialRevocation) {
  ResizeStateMachine m(2);
  m.Start();
  m.OnOrder(Order(2, 1));
  m.OnStepExited(0, false);
  m.OnAllocationResized(true, 1);
  auto actions = m.OnOrder(Order(3, 3));
  m.OnStepExited(0, false);
  actions = m.OnAllocationResized(true, 3);
  ASSERT_EQ(actions[0].kind, K::kLaunchStep);
  EXPECT_TRUE(actions[0].credential_grace);
  EXPECT_EQ(m.nodes(), 3);
  EXPECT_EQ(m.generation(), 3u);
}

TEST(ResizeStateMachine, FirstGrowNeedsNoGrace) {
  ResizeStateMachine m(1);
  m.Start();
  m.OnOrder(Order(2, 4));
  auto actions = m.OnStepExited(0, false);
  EXPECT_EQ(actions[0].kind, K::kGrowAllocation);
  actions = m.OnAllocationResized(true, 4);
  EXPECT_FALSE(actions[0].credential_grace);
}

TEST(ResizeStateMachine, OrdersAreIdempotent) {
  ResizeStateMachine m(3);
  m.Start();
  m.OnOrder(Order(5, 2));
  auto duplicate = m.OnOrder(Order(5, 2));
  ASSERT_EQ(Kinds(duplicate), (std::vector<K>{K::kReport}));
  EXPECT_NE(duplicate[0].detail.find("already seen"), std::string::npos);
  auto stale = m.OnOrder(Order(4, 1));
  EXPECT_NE(stale[0].detail.find("already seen"), std::string::npos);
  EXPECT_EQ(m.state(), S::kCheckpointing);
}

TEST(ResizeStateMachine, OrderForTheCurrentSizeOnlyAdoptsTheGeneration) {
  ResizeStateMachine m(2);
  m.Start();
  auto actions = m.OnOrder(Order(7, 2));
  EXPECT_EQ(Kinds(actions), (std::vector<K>{K::kReport}));
  EXPECT_EQ(m.generation(), 7u);
  EXPECT_EQ(m.state(), S::kRunning);
}

TEST(ResizeStateMachine, NewerOrderMidResizeRunsAfterIt) {
  ResizeStateMachine m(4);
  m.Start();
  m.OnOrder(Order(2, 2));
  m.OnOrder(Order(3, 3));  // queued
  m.OnOrder(Order(4, 1));  // newer: replaces the queued one
  m.OnStepExited(0, false);
  auto actions = m.OnAllocationResized(true, 2);
  // Relaunch at 2 (generation 2), then immediately checkpoint for generation 4's shrink to 1.
  ASSERT_EQ(Kinds(actions),
            (std::vector<K>{K::kLaunchStep, K::kReport, K::kCheckpointStep, K::kReport}));
  EXPECT_EQ(actions[0].generation, 2u);
  EXPECT_EQ(m.state(), S::kCheckpointing);
  actions = m.OnStepExited(0, false);
  EXPECT_EQ(actions[0].kind, K::kShrinkAllocation);
  EXPECT_EQ(actions[0].nodes, 1);
  EXPECT_EQ(actions[0].generation, 4u);
}

TEST(ResizeStateMachine, FailedResizeRelaunchesOnTheOldNodes) {
  ResizeStateMachine m(2);
  m.Start();
  m.OnOrder(Order(2, 4));
  m.OnStepExited(0, false);
  auto actions = m.OnAllocationResized(false, 0);
  ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kLaunchStep, K::kReport}));
  EXPECT_EQ(actions[0].nodes, 2);
  EXPECT_EQ(actions[0].generation, 1u);
  EXPECT_NE(actions[1].detail.find("resize to 4 failed"), std::string::npos);
  EXPECT_EQ(m.state(), S::kRunning);
}

TEST(ResizeStateMachine, StepFailuresKeepTheCheckpointAndStop) {
  ResizeStateMachine m(2);
  m.Start();
  m.OnOrder(Order(2, 1));
  auto actions = m.OnStepExited(137, false);
  ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kReport}));
  EXPECT_NE(actions[0].detail.find("step exited 137 while checkpointing"), std::string::npos);
  EXPECT_NE(actions[0].detail.find("last good checkpoint is kept"), std::string::npos);
  EXPECT_EQ(m.state(), S::kFailed);
  EXPECT_EQ(m.OnOrder(Order(3, 2))[0].detail, "failed: order ignored: job is failed");
}

TEST(ResizeStateMachine, AFailedStepRestartsOnTheSameNodesWithinTheBudget) {
  ResizeStateMachine m(2, /*max_restarts=*/2);
  m.Start();
  auto first = m.OnStepExited(137, false);  // a rank killed mid-step
  ASSERT_EQ(Kinds(first), (std::vector<K>{K::kLaunchStep, K::kReport}));
  EXPECT_EQ(first[0].nodes, 2);
  EXPECT_EQ(first[0].generation, 1u);
  EXPECT_FALSE(first[0].credential_grace);
  EXPECT_NE(first[1].detail.find("step exited 137: restart 1 of 2 from the newest checkpoint"),
            std::string::npos) << first[1].detail;
  EXPECT_EQ(m.state(), S::kRunning);
  // Failing while checkpointing for a resize: the order is dropped, the nodes are unchanged.
  m.OnOrder(Order(2, 1));
  auto second = m.OnStepExited(1, false);
  ASSERT_EQ(Kinds(second), (std::vector<K>{K::kLaunchStep, K::kReport}));
  EXPECT_EQ(second[0].nodes, 2);
  EXPECT_EQ(m.restarts(), 2);
  EXPECT_EQ(m.nodes(), 2);
  // A later order still works after restarts.
  EXPECT_EQ(Kinds(m.OnOrder(Order(3, 1))), (std::vector<K>{K::kCheckpointStep, K::kReport}));
  m.OnStepExited(0, false);
  EXPECT_EQ(m.OnAllocationResized(true, 1)[0].generation, 3u);
  // The budget is spent: the next failure ends the job, keeping the checkpoint.
  auto last = m.OnStepExited(9, false);
  EXPECT_EQ(m.state(), S::kFailed);
  EXPECT_NE(last[0].detail.find("(2 of 2 restarts used)"), std::string::npos) << last[0].detail;
}

TEST(ResizeStateMachine, ANodeLostUnderNoKillRelaunchesOnWhatIsLeft) {
  ResizeStateMachine m(3, /*max_restarts=*/1);
  m.Start();
  m.AdoptLostNodes(2);
  auto actions = m.OnStepExited(143, false);
  ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kLaunchStep, K::kReport}));
  EXPECT_EQ(actions[0].nodes, 2);
  EXPECT_EQ(m.nodes(), 2);
  m.AdoptLostNodes(0);  // nonsense counts change nothing
  m.AdoptLostNodes(5);
  EXPECT_EQ(m.nodes(), 2);
  // Growing back onto the failed node later waits out the credential revocation.
  m.OnOrder(Order(2, 3));
  m.OnStepExited(0, false);
  EXPECT_TRUE(m.OnAllocationResized(true, 3)[0].credential_grace);
}

// Slurm stops the job (a requeue, say) while restarts are left: a step killed before its
// checkpoint is not relaunched, nor is a resize carried on; a step that checkpointed ends cleanly.
TEST(ResizeStateMachine, AStepEndedByTheJobsStopIsNeverRelaunched) {
  for (bool mid_resize : {false, true}) {
    ResizeStateMachine m(2, /*max_restarts=*/2);
    m.Start();
    if (mid_resize) m.OnOrder(Order(2, 1));
    auto actions = m.OnStepStopped(143);
    ASSERT_EQ(Kinds(actions), (std::vector<K>{K::kReport})) << mid_resize;
    EXPECT_EQ(m.state(), S::kFailed) << mid_resize;
    EXPECT_EQ(m.restarts(), 0) << mid_resize;
    ResizeStateMachine clean(2, 2);
    clean.Start();
    if (mid_resize) clean.OnOrder(Order(2, 1));
    EXPECT_EQ(Kinds(clean.OnStepStopped(0)), (std::vector<K>{K::kReport})) << mid_resize;
    EXPECT_EQ(clean.state(), S::kFinished) << mid_resize;
  }
}

TEST(ResizeStateMachine, FinishedTrainingEndsTheJob) {
  ResizeStateMachine m(2);
  m.Start();
  auto actions = m.OnStepExited(0, true);
  EXPECT_EQ(m.state(), S::kFinished);
  EXPECT_EQ(actions[0].detail, "finished: training complete");
}

TEST(ResizeStateMachine, RefusesAnOrderForZeroNodes) {
  ResizeStateMachine m(2);
  m.Start();
  auto actions = m.OnOrder(Order(2, 0));
  EXPECT_NE(actions[0].detail.find("refused"), std::string::npos);
  EXPECT_EQ(m.state(), S::kRunning);
}

}  // namespace
}  // namespace elastic::agent
