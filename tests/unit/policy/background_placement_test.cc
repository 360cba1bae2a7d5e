// PlanBackground (DeepPool §5 at cluster level): background jobs only on foreground nodes, who
// gives way and in what order, and never more background jobs per node than configured.
#include "scheduler/policy/background_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace elastic::policy {
namespace {

constexpr const char* kBg = "background";

SlurmNode Node(const std::string& name, bool in_bg_partition = false) {
  SlurmNode node;
  node.name = name;
  node.partitions = {"main"};
  if (in_bg_partition) node.partitions.push_back(kBg);
  node.cpus = 4;
  node.available = true;
  return node;
}

SlurmJob Running(std::uint32_t id, std::vector<std::string> nodes, std::string partition = "main",
                 std::int64_t start = 100) {
  SlurmJob job;
  job.job_id = id;
  job.partition = std::move(partition);
  job.state = SlurmJobState::kRunning;
  job.nodes = std::move(nodes);
  job.batch_host = job.nodes.front();
  job.min_nodes = static_cast<int>(job.nodes.size());
  job.start_time = start;
  return job;
}

SlurmJob Pending(std::uint32_t id, std::vector<std::string> sched_nodes,
                 std::string partition = "main", std::string reason = "Resources") {
  SlurmJob job;
  job.job_id = id;
  job.partition = std::move(partition);
  job.state = SlurmJobState::kPending;
  job.reason = std::move(reason);
  job.sched_nodes = std::move(sched_nodes);
  return job;
}

SlurmView View(int nodes, std::vector<SlurmJob> jobs) {
  SlurmView view;
  view.now = 1000;
  for (int i = 1; i <= nodes; ++i) view.nodes.push_back(Node("n" + std::to_string(i)));
  view.jobs = std::move(jobs);
  return view;
}

BackgroundOptions Options(int max_per_node = 1) {
  BackgroundOptions options;
  options.partition = kBg;
  options.max_per_node = max_per_node;
  return options;
}

std::vector<std::uint32_t> GiveWayIds(const BackgroundPlan& plan) {
  std::vector<std::uint32_t> ids;
  for (const GiveWay& g : plan.give_way) ids.push_back(g.job_id);
  return ids;
}

using Nodes = std::vector<std::string>;

TEST(BackgroundPlacement, OffWithoutAPartition) {
  SlurmView view = View(2, {Running(1, {"n1"}), Running(2, {"n2"}, kBg)});
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1"}, {}}}, BackgroundOptions{});
  EXPECT_TRUE(plan.partition_nodes.empty());
  EXPECT_FALSE(plan.partition_changed);
  EXPECT_TRUE(plan.give_way.empty());
}

TEST(BackgroundPlacement, PartitionHoldsOnlyForegroundNodesNeverIdleOnes) {
  // Job 1 is a foreground elastic job on n1,n2; job 3 is rigid on n3 (not elastic); n4 is idle.
  SlurmView view = View(4, {Running(1, {"n1", "n2"}), Running(3, {"n3"})});
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1", "n2"}, {}}}, Options());
  EXPECT_EQ(plan.partition_nodes, (Nodes{"n1", "n2"}));
  EXPECT_TRUE(plan.partition_changed);
  EXPECT_TRUE(plan.give_way.empty());
}

TEST(BackgroundPlacement, NoForegroundJobMeansAnEmptyPartition) {
  SlurmView view = View(3, {Running(3, {"n3"})});
  view.nodes[0] = Node("n1", true);
  BackgroundPlan plan = PlanBackground(view, {}, Options());
  EXPECT_TRUE(plan.partition_nodes.empty());
  EXPECT_TRUE(plan.partition_changed);  // n1 was in it
}

TEST(BackgroundPlacement, UnchangedPartitionIsNotRewritten) {
  SlurmView view = View(2, {Running(1, {"n1"})});
  view.nodes[0] = Node("n1", true);
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1"}, {}}}, Options());
  EXPECT_EQ(plan.partition_nodes, (Nodes{"n1"}));
  EXPECT_FALSE(plan.partition_changed);
}

TEST(BackgroundPlacement, ForegroundJobsThatAreNotRunningOrAreBackgroundHostNothing) {
  // Job 7 is unknown to Slurm (ended); job 2 runs in the background partition itself.
  SlurmView view = View(3, {Running(2, {"n2"}, kBg)});
  BackgroundPlan plan = PlanBackground(view, {{7, {"n1"}, {}}, {2, {"n2"}, {}}}, Options());
  EXPECT_TRUE(plan.partition_nodes.empty());
  ASSERT_EQ(plan.give_way.size(), 1u);
  EXPECT_EQ(plan.give_way[0].job_id, 2u);
  EXPECT_EQ(plan.give_way[0].cause, GiveWayCause::kNoForegroundJob);
}

TEST(BackgroundPlacement, NodesLeftOrPlannedOrUnavailableAreNotOffered) {
  // Job 1 holds n1..n4: it is shrinking away from n2; waiting job 9 plans to start on n3
  // (once job 1 gives it back); n4 is drained.
  SlurmView view = View(4, {Running(1, {"n1", "n2", "n3", "n4"}), Pending(9, {"n3"})});
  view.nodes[3].available = false;
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1", "n2", "n3", "n4"}, {"n2"}}}, Options());
  EXPECT_EQ(plan.partition_nodes, (Nodes{"n1"}));
}

TEST(BackgroundPlacement, ABackgroundJobCoLocatedWithItsForegroundJobStays) {
  SlurmView view = View(2, {Running(1, {"n1"}), Running(5, {"n1"}, kBg)});
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1"}, {}}}, Options());
  EXPECT_TRUE(plan.give_way.empty());
  EXPECT_TRUE(plan.partition_nodes.empty());  // n1 is full at max_per_node = 1
}

TEST(BackgroundPlacement, GivesWayWhenTheForegroundJobShrinksAwayOrEnds) {
  // Job 1 is shrinking away from n2, where background job 5 runs; job 6 sits on n3, whose
  // foreground job has ended.
  SlurmView view = View(3, {Running(1, {"n1", "n2"}), Running(5, {"n2"}, kBg),
                            Running(6, {"n3"}, kBg)});
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1", "n2"}, {"n2"}}}, Options());
  EXPECT_EQ(GiveWayIds(plan), (std::vector<std::uint32_t>{5, 6}));
  EXPECT_EQ(plan.give_way[0].node, "n2");
  EXPECT_EQ(plan.give_way[1].node, "n3");
  for (const GiveWay& g : plan.give_way) {
    EXPECT_EQ(g.cause, GiveWayCause::kNoForegroundJob);
    EXPECT_NE(g.reason.find("runs no foreground elastic job"), std::string::npos) << g.reason;
  }
  EXPECT_EQ(plan.partition_nodes, (Nodes{"n1"}));
}

TEST(BackgroundPlacement, AMultiNodeJobGivesWayIfAnyOfItsNodesLosesItsHost) {
  SlurmView view = View(3, {Running(1, {"n1"}), Running(5, {"n1", "n2"}, kBg)});
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1"}, {}}}, Options());
  ASSERT_EQ(GiveWayIds(plan), (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(plan.give_way[0].node, "n2");
  EXPECT_EQ(plan.partition_nodes, (Nodes{"n1"}));  // job 5 leaves, so n1 has room again
}

TEST(BackgroundPlacement, GiveWayOrderIsPlannedStartThenNoHostThenFactorNewestFirst) {
  // n1: foreground job 1 with three background jobs (max 1): 12 (start 50) stays, 13 (start 70)
  // and 11 (start 60) are over the factor. n2: no host, job 21 (start 10). n3: no host and in
  // waiting job 9's plan, jobs 31 (start 20) and 32 (start 30).
  SlurmView view = View(3, {Running(1, {"n1"}), Running(11, {"n1"}, kBg, 60),
                            Running(12, {"n1"}, kBg, 50), Running(13, {"n1"}, kBg, 70),
                            Running(21, {"n2"}, kBg, 10), Running(31, {"n3"}, kBg, 20),
                            Running(32, {"n3"}, kBg, 30), Pending(9, {"n3"})});
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1"}, {}}}, Options());
  EXPECT_EQ(GiveWayIds(plan), (std::vector<std::uint32_t>{32, 31, 21, 13, 11}));
  EXPECT_EQ(plan.give_way[0].cause, GiveWayCause::kNeededByPendingJob);
  EXPECT_NE(plan.give_way[0].reason.find("waiting job 9"), std::string::npos);
  EXPECT_EQ(plan.give_way[2].cause, GiveWayCause::kNoForegroundJob);
  EXPECT_EQ(plan.give_way[3].cause, GiveWayCause::kOverFactor);
  EXPECT_TRUE(plan.partition_nodes.empty());  // n1 keeps job 12: full
}

TEST(BackgroundPlacement, PendingBackgroundOrHeldJobsDoNotReserveNodes) {
  // A pending background job's plan, or a held job's, does not count as Slurm needing the node.
  SlurmView view = View(2, {Running(1, {"n1", "n2"}), Pending(5, {"n1"}, kBg),
                            Pending(6, {"n2"}, "main", "JobHeldUser")});
  BackgroundPlan plan = PlanBackground(view, {{1, {"n1", "n2"}, {}}}, Options());
  EXPECT_EQ(plan.partition_nodes, (Nodes{"n1", "n2"}));
}

TEST(BackgroundPlacement, TheFactorAllowsThatManyPerNode) {
  SlurmView view = View(2, {Running(1, {"n1", "n2"}), Running(5, {"n1"}, kBg),
                            Running(6, {"n1"}, kBg, 200), Running(7, {"n2"}, kBg)});
  BackgroundPlan two = PlanBackground(view, {{1, {"n1", "n2"}, {}}}, Options(2));
  EXPECT_TRUE(two.give_way.empty());
  EXPECT_EQ(two.partition_nodes, (Nodes{"n2"}));  // n1 has 2 of 2
  BackgroundPlan one = PlanBackground(view, {{1, {"n1", "n2"}, {}}}, Options(1));
  EXPECT_EQ(GiveWayIds(one), (std::vector<std::uint32_t>{6}));  // the later of n1's two
  EXPECT_TRUE(one.partition_nodes.empty());
}

// Invariants on random clusters: after the give-way list is carried out, every background job
// left runs only on foreground nodes not being left, at most max_per_node per node; the
// partition offers only such nodes, never one at its cap, idle, planned or unavailable.
TEST(BackgroundPlacement, RandomClustersKeepTheInvariants) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const int n = 1 + static_cast<int>(rng() % 6);
    const int factor = 1 + static_cast<int>(rng() % 3);
    std::vector<SlurmJob> jobs;
    std::vector<ForegroundJob> fg;
    std::set<std::string> hosts;
    std::uint32_t id = 1;
    for (int i = 1; i <= n; ++i) {
      const std::string node = "n" + std::to_string(i);
      if (rng() % 2 == 0) {
        ForegroundJob f{id, {node}, {}};
        if (rng() % 4 == 0) f.leaving = {node};
        else hosts.insert(node);
        fg.push_back(f);
        jobs.push_back(Running(id++, {node}));
      }
      const int bgs = static_cast<int>(rng() % 4);
      for (int b = 0; b < bgs; ++b) {
        jobs.push_back(Running(id++, {node}, kBg, static_cast<std::int64_t>(rng() % 100)));
      }
      if (rng() % 5 == 0) jobs.push_back(Pending(id++, {node}));
    }
    SlurmView view = View(n, jobs);
    BackgroundPlan plan = PlanBackground(view, fg, Options(factor));
    std::set<std::uint32_t> gone;
    for (const GiveWay& g : plan.give_way) EXPECT_TRUE(gone.insert(g.job_id).second);
    std::map<std::string, int> per_node;
    for (const SlurmJob& job : view.jobs) {
      if (job.partition != kBg || gone.contains(job.job_id)) continue;
      for (const std::string& node : job.nodes) {
        EXPECT_TRUE(hosts.contains(node)) << "round " << round << " job " << job.job_id;
        EXPECT_LE(++per_node[node], factor) << "round " << round << " node " << node;
      }
    }
    std::set<std::string> planned;
    for (const SlurmJob& job : view.jobs) {
      if (job.state == SlurmJobState::kPending) planned.insert(job.sched_nodes.begin(), job.sched_nodes.end());
    }
    for (const std::string& node : plan.partition_nodes) {
      EXPECT_TRUE(hosts.contains(node)) << "round " << round << " offered " << node;
      EXPECT_FALSE(planned.contains(node)) << "round " << round << " offered planned " << node;
      EXPECT_LT(per_node[node], factor) << "round " << round << " offered full " << node;
    }
  }
}

}  // namespace
}  // namespace elastic::policy
