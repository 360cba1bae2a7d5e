// elasticd's background step through RunCycle (views built by hand): the partition follows the
// registered foreground job, a registered background job is never grown, a shrink order makes
// the background job on the released node give way; the [background] config keys.
#include "scheduler/daemon/background_cycle.h"

#include <gtest/gtest.h>

#include "common/toml_reader.h"
#include "scheduler/daemon/daemon_config.h"
#include "scheduler/daemon/daemon_cycle.h"

namespace elastic::daemon {
namespace {

policy::SlurmJob Job(std::uint32_t id, std::string partition, policy::SlurmJobState state,
                     std::vector<std::string> nodes) {
  policy::SlurmJob job;
  job.job_id = id;
  job.partition = std::move(partition);
  job.state = state;
  job.nodes = std::move(nodes);
  if (!job.nodes.empty()) job.batch_host = job.nodes.front();
  job.min_nodes = static_cast<int>(job.nodes.size());
  job.start_time = 100;
  return job;
}

// n1..n3; foreground elastic job 11 (bounds 1-2) on n1,n2 with free cores; background job 21
// on n2; background job 22 waiting for resources; rigid job 31 fills n3 (no idle node).
policy::SlurmView View() {
  policy::SlurmView view;
  view.now = 1000;
  for (const char* name : {"n1", "n2", "n3"}) {
    policy::SlurmNode node;
    node.name = name;
    node.partitions = {"main"};
    if (std::string(name) != "n3") node.partitions.push_back("bg");  // as elasticd set it
    node.cpus = 4;
    node.alloc_cpus = std::string(name) == "n3" ? 4 : 2;
    node.available = true;
    view.nodes.push_back(node);
  }
  view.jobs.push_back(Job(11, "main", policy::SlurmJobState::kRunning, {"n1", "n2"}));
  view.jobs.back().admin_comment = "elastic:nodes=0/1-2";
  view.jobs.back().elastic = true;  // the record slurm_records reads
  view.jobs.push_back(Job(21, "bg", policy::SlurmJobState::kRunning, {"n2"}));
  view.jobs.push_back(Job(31, "main", policy::SlurmJobState::kRunning, {"n3"}));
  view.jobs.push_back(Job(22, "bg", policy::SlurmJobState::kPending, {}));
  view.jobs.back().reason = "Resources";
  view.jobs.back().min_nodes = 1;
  return view;
}

JobRecord Record(std::uint32_t id, std::vector<std::string> nodes, std::string sla_class) {
  JobRecord job;
  job.job_id = id;
  job.nodes = std::move(nodes);
  job.min_nodes = 1;
  job.max_nodes = static_cast<int>(job.nodes.size());
  job.bounds_known = true;
  job.ests = 2;
  job.sla_class = std::move(sla_class);
  job.last_resize_unix = 0;
  return job;
}

CycleOptions Options() {
  CycleOptions options;
  options.policy = "elastic";
  options.decision.min_resize_interval_s = 0;
  options.background.partition = "bg";
  options.background.max_per_node = 1;
  return options;
}

TEST(BackgroundCycle, PartitionFollowsTheForegroundJob) {
  DaemonState state;
  state.jobs = {Record(11, {"n1", "n2"}, "best-effort"), Record(21, {"n2"}, "background")};
  CycleResult result = RunCycle(state, View(), Options());
  ASSERT_TRUE(result.background_partition_nodes.has_value());
  EXPECT_EQ(*result.background_partition_nodes, (std::vector<std::string>{"n1"}));  // n2 full
  EXPECT_TRUE(result.background_give_way.empty());
  for (const JobRecord& job : state.jobs) EXPECT_FALSE(job.order.has_value()) << job.job_id;
}

TEST(BackgroundCycle, ARegisteredBackgroundJobIsNeverGrownIntoAnIdleNode) {
  policy::SlurmView view = View();
  std::erase_if(view.jobs, [](const policy::SlurmJob& j) { return j.job_id == 31 || j.job_id == 22; });
  view.nodes[2].alloc_cpus = 0;  // n3 idle, and in the background partition (an admin's edit)
  view.nodes[2].partitions.push_back("bg");
  DaemonState state;
  JobRecord bg = Record(21, {"n2"}, "background");
  bg.max_nodes = 3;
  state.jobs = {Record(11, {"n1", "n2"}, "best-effort"), bg};
  RunCycle(state, view, Options());
  EXPECT_FALSE(state.Find(21)->order.has_value()) << state.Find(21)->order->reason;
}

TEST(BackgroundCycle, AShrinkOrderMakesTheBackgroundJobOnTheReleasedNodeGiveWay) {
  DaemonState state;
  state.jobs = {Record(11, {"n1", "n2"}, "best-effort")};
  ResizeOrder order;
  order.generation = 2;
  order.grow = false;
  order.target_nodes = {"n1"};
  order.changed_nodes = {"n2"};
  order.issued_unix = 999;
  state.jobs[0].order = order;
  CycleResult result = RunCycle(state, View(), Options());
  ASSERT_EQ(result.background_give_way.size(), 1u);
  EXPECT_EQ(result.background_give_way[0].job_id, 21u);
  EXPECT_EQ(result.background_give_way[0].node, "n2");
  ASSERT_TRUE(result.background_partition_nodes.has_value());
  EXPECT_EQ(*result.background_partition_nodes, (std::vector<std::string>{"n1"}));
}

TEST(BackgroundCycle, OffWithoutAPartition) {
  DaemonState state;
  state.jobs = {Record(11, {"n1", "n2"}, "best-effort")};
  CycleOptions options = Options();
  options.background.partition.clear();
  CycleResult result = RunCycle(state, View(), options);
  EXPECT_FALSE(result.background_partition_nodes.has_value());
  EXPECT_TRUE(result.background_give_way.empty());
}

TEST(BackgroundCycle, ConfigDefaultsArePinnedAndBadValuesRefused) {
  DaemonConfig defaults = ParseDaemonConfig("", "test.toml");
  EXPECT_EQ(defaults.background_partition, "");
  EXPECT_EQ(defaults.background_max_per_node, 1);
  DaemonConfig set =
      ParseDaemonConfig("[background]\npartition = \"bg-1\"\nmax_per_node = 2\n", "test.toml");
  EXPECT_EQ(set.background_partition, "bg-1");
  EXPECT_EQ(set.background_max_per_node, 2);
  for (const char* bad : {"[background]\npartition = \"a,b\"\n",
                          "[background]\npartition = \"a b\"\n",
                          "[background]\nmax_per_node = 0\n", "[background]\nnodes = 1\n"}) {
    EXPECT_THROW(ParseDaemonConfig(bad, "test.toml"), ConfigError) << bad;
  }
}

}  // namespace
}  // namespace elastic::daemon
