// Growth by requeue through RunCycle (scheduler/daemon/regrow.h): the requeue, the start on the
// new node count, nobody growing into the nodes given back, and a requeued elastic job's own node
// range given back to its Slurm record.
#include "scheduler/daemon/regrow.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "tests/unit/daemon/cycle_fixture.h"

namespace elastic::daemon {
namespace {

// Job 11 holds 2-GPU node n1 as gres and the other three nodes are idle: the cycle grows it by a
// requeue (no order to its supervisor), keeps it out of further decisions while Slurm still shows
// it running, shows it waiting for 4 nodes so nobody grows into them, and once Slurm shows it
// pending starts it on 4 nodes — not in the second after the requeue (Slurm refuses a launch on a
// revoked credential). A regrow whose job is never seen pending is given up after
// kRegrowTimeoutS.
TEST(DaemonCycle, AJobHoldingGresGrowsByRequeueThenStartsOnItsNewNodeCount) {
  DaemonState state;
  policy::SlurmView view = View(10'000, {"n1"}, 2);
  view.jobs[0].start_time = 10'000 - 3'600;
  view.jobs[0].gpus = 2;
  view.jobs[0].exclusive = true;
  ASSERT_TRUE(Call(state, 10'000, {{"op", "register"}, {"job_id", 11}, {"ests", 8}}, view)["ok"]);
  CycleOptions options;
  options.policy = "elastic";
  CycleResult result = RunCycle(state, view, options);
  EXPECT_EQ(result.regrow_requeues, (std::vector<std::uint32_t>{11}));
  EXPECT_FALSE(state.jobs[0].order.has_value());
  ASSERT_EQ(state.regrows.count(11), 1u);
  EXPECT_EQ(state.regrows[11].nodes, 4);
  EXPECT_EQ(state.recent.back().action, "grow");
  view.now = 10'001;  // the requeue not yet seen: no second one
  result = RunCycle(state, view, options);
  EXPECT_TRUE(result.regrow_requeues.empty());
  EXPECT_TRUE(result.regrow_starts.empty());

  view.jobs[0].state = policy::SlurmJobState::kPending;
  view.jobs[0].nodes.clear();
  view.jobs[0].reason = "BeginTime";
  view.now = 10'001;
  EXPECT_TRUE(RunCycle(state, view, options).regrow_starts.empty());
  view.now = 10'000 + kRequeueSettleS;
  result = RunCycle(state, view, options);
  EXPECT_EQ(result.regrow_starts, (std::vector<std::pair<std::uint32_t, int>>{{11, 4}}));
  EXPECT_TRUE(state.regrows.empty());
  EXPECT_EQ(state.recent.back().action, "regrow");

  state.regrows[11] = {4, 20'000};
  view.jobs[0].state = policy::SlurmJobState::kRunning;  // never seen pending
  view.now = 20'000 + kRegrowTimeoutS + 1;
  EXPECT_TRUE(RunCycle(state, view, Observe()).regrow_starts.empty());
  EXPECT_TRUE(state.regrows.empty());
  EXPECT_EQ(state.recent.back().action, "failed");
}

// While job 11 waits to start again on 3 nodes, job 13 (elastic, on n4) is not grown into the
// nodes job 11 gave back: the decision sees job 11 waiting for them.
TEST(DaemonCycle, NoJobGrowsIntoTheNodesARegrowingJobGaveBack) {
  DaemonState state;
  policy::SlurmView view = View(10'000, {"n4"}, 2);
  view.jobs[0].job_id = 13;
  view.jobs[0].batch_host = "n4";
  view.jobs[0].start_time = 10'000 - 3'600;
  ASSERT_TRUE(Call(state, 10'000, {{"op", "register"}, {"job_id", 13}, {"ests", 8}}, view)["ok"]);
  view.jobs.insert(view.jobs.begin(), PendingJob(11, 1, "BeginTime"));
  CycleOptions options;
  options.policy = "elastic";
  for (bool regrowing : {false, true}) {
    DaemonState s = state;
    if (regrowing) s.regrows[11] = {3, 9'999};
    RunCycle(s, view, options);
    ASSERT_EQ(s.jobs.size(), 1u);
    EXPECT_EQ(s.jobs[0].order.has_value(), !regrowing) << regrowing;
  }
}

// Job 11, started on 3 nodes by a grow by requeue (Slurm's record: NumNodes=3), runs; later it
// is requeued again (preempted, say): its record gets back its own range 1-4 from job_submit.lua's
// AdminComment record, once for that requeue. While it is being regrown, and after the start
// before Slurm has run it, its record is left alone.
TEST(DaemonCycle, ARegrownJobPendingAgainGetsItsOwnNodeRangeBack) {
  DaemonState state;
  policy::SlurmView view = View(10'000, {}, 2);
  view.jobs[0] = PendingJob(11, 1, "BeginTime");
  view.jobs[0].admin_comment = "elastic:nodes=1/1-4";
  view.jobs[0].elastic = true;  // the record slurm_records reads
  view.jobs[0].max_nodes = 1;  // what Slurm's requeue left
  view.jobs[0].restarts = 1;
  state.regrows[11] = {3, 10'000 - kRequeueSettleS};
  CycleResult result = RunCycle(state, view, Observe());
  ASSERT_EQ(result.regrow_starts, (std::vector<std::pair<std::uint32_t, int>>{{11, 3}}));
  EXPECT_TRUE(result.range_restores.empty());

  view.jobs[0].min_nodes = view.jobs[0].max_nodes = 3;  // what StartRequeuedJob set
  view.now = 10'005;  // not yet started: it may still start on its 3 nodes
  EXPECT_TRUE(RunCycle(state, view, Observe()).range_restores.empty());
  view.jobs[0].state = policy::SlurmJobState::kRunning;
  view.jobs[0].nodes = {"n1", "n2", "n3"};
  view.now = 10'010;
  EXPECT_TRUE(RunCycle(state, view, Observe()).range_restores.empty());

  view.jobs[0].state = policy::SlurmJobState::kPending;
  view.jobs[0].nodes.clear();
  view.jobs[0].restarts = 2;
  view.now = 10'020;
  result = RunCycle(state, view, Observe());
  EXPECT_EQ(result.range_restores, (std::vector<RangeRestore>{{11, 1, 4}}));
  EXPECT_EQ(state.recent.back().action, "range");
  view.now = 10'030;  // Slurm has not shown the new range yet: not written twice
  EXPECT_TRUE(RunCycle(state, view, Observe()).range_restores.empty());
  view.jobs[0].restarts = 3;  // requeued once more
  EXPECT_EQ(RunCycle(state, view, Observe()).range_restores,
            (std::vector<RangeRestore>{{11, 1, 4}}));
}

// Any elastic job pending after a requeue with a record Slurm pinned to its last node count gets
// its range back (a preempted job); one that never ran, one whose record has its range, one
// without a job_submit.lua record and one that ended are left alone; a regrow start Slurm has not
// run within kRegrowTimeoutS gets its range back, so it can start on fewer nodes.
TEST(DaemonCycle, AnElasticJobPendingAfterARequeueGetsItsOwnNodeRangeBack) {
  auto restores = [](policy::SlurmJob job, DaemonState state = {}) {
    policy::SlurmView view = View(10'000, {}, 2);
    view.jobs[0] = std::move(job);
    return RunCycle(state, view, Observe()).range_restores;
  };
  policy::SlurmJob preempted = PendingJob(11, 4, "BeginTime");
  preempted.max_nodes = 4;
  preempted.restarts = 1;
  preempted.admin_comment = "elastic:nodes=4/2-4";
  preempted.elastic = true;  // the record slurm_records reads
  EXPECT_EQ(restores(preempted), (std::vector<RangeRestore>{{11, 2, 4}}));
  DaemonState starting;
  starting.regrow_started[11] = 10'000 - kRegrowTimeoutS;
  EXPECT_TRUE(restores(preempted, starting).empty());
  starting.regrow_started[11] = 9'999 - kRegrowTimeoutS;
  EXPECT_EQ(restores(preempted, starting), (std::vector<RangeRestore>{{11, 2, 4}}));

  policy::SlurmJob never_ran = preempted;
  never_ran.restarts = 0;
  EXPECT_TRUE(restores(never_ran).empty());
  policy::SlurmJob own_range = preempted;
  own_range.min_nodes = 2;
  EXPECT_TRUE(restores(own_range).empty());
  policy::SlurmJob rigid = preempted;
  rigid.admin_comment = "";
  EXPECT_TRUE(restores(rigid).empty());
  policy::SlurmJob ended = preempted;
  ended.state = policy::SlurmJobState::kOther;
  ended.finished = true;
  EXPECT_TRUE(restores(ended).empty());
}

}  // namespace
}  // namespace elastic::daemon
