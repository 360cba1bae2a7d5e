// --elastic-class=background on a real cluster (DeepPool §5 co-location; docs/admin.md
// "Background jobs"): job_submit.lua steers the job into the background partition, elasticd
// keeps that partition on the nodes of foreground elastic jobs, so background jobs run only
// beside a foreground job (never on an idle node) and are requeued when the foreground job
// shrinks away or ends, while other jobs are never touched. Sleep-based batch jobs stand in for
// training; the foreground job registers through `elasticd request`, as its supervisor would.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/common/local_cluster.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

constexpr const char* kPartition = "background";

class BackgroundPlacement : public ClusterSuite {
 protected:
  static void SetUpTestSuite() {
    LocalCluster::Options options;
    options.nodes = 3;
    options.with_elasticd = true;
    options.resize_interval = "1h";  // only the administrator's order below resizes
    options.background_partition = kPartition;
    StartSuiteCluster(options);
  }

  static std::string Field(const std::string& job, const char* format) {
    std::string out = cluster().Run("squeue -h -j " + job + " -o " + format).output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }
  static std::string State(const std::string& job) { return Field(job, "%T"); }
  static std::string Nodes(const std::string& job) { return Field(job, "%N"); }
  static std::string PartitionNodes() {
    std::string out = cluster().Run(std::string("sinfo -h -p ") + kPartition + " -o %N").output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out == "n/a" ? "" : out;
  }
  static std::string Elasticd(const std::string& args) {
    return cluster()
        .Run(std::string(ELASTIC_BINARY_DIR) + "/scheduler/daemon/elasticd " + args + " -c " +
             cluster().Export("ELASTIC_CLUSTER_DIR") + "/etc/elasticd.toml 2>&1")
        .output;
  }
  static std::string ElasticdLog() {
    return cluster().Run("cat " + cluster().Export("ELASTIC_CLUSTER_DIR") + "/log/elasticd.log")
        .output;
  }
  // Polls `condition` (no timing is asserted: the deadline only bounds a hang).
  template <typename F>
  static bool WaitFor(F condition, int timeout_s = 60) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    while (std::chrono::steady_clock::now() < deadline) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return condition();
  }
};

TEST_F(BackgroundPlacement, SrunCannotStartABackgroundJob) {
  CommandResult r = cluster().Run("srun --elastic --elastic-class=background -N 1 true");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("submit background jobs with sbatch or salloc"), std::string::npos)
      << r.output;
}

TEST_F(BackgroundPlacement, RunsOnlyBesideForegroundJobsAndGivesWayWhenTheyLeave) {
  // Foreground: an elastic job on n1,n2 with one CPU per node, leaving cores for co-location.
  const std::string fg = Submit("-N 1-2 -n 2 --elastic -o /dev/null --wrap 'sleep 600'");
  ASSERT_TRUE(WaitFor([&] { return State(fg) == "RUNNING"; })) << State(fg);
  ASSERT_EQ(Nodes(fg), "n[1-2]");
  // Nothing hosts background work yet: the partition is empty, a background job waits.
  EXPECT_EQ(PartitionNodes(), "");
  const std::string early =
      Submit("-N 1 --elastic --elastic-class=background -o /dev/null --wrap 'sleep 600'");
  EXPECT_EQ(Field(early, "%P"), kPartition) << "job_submit.lua did not steer it";
  EXPECT_EQ(State(early), "PENDING");
  // A plain job in the normal partition, on the idle n3: never touched by any of this.
  const std::string plain = Submit("-N 1 -w n3 -n 1 -o /dev/null --wrap 'sleep 600'");
  ASSERT_TRUE(WaitFor([&] { return State(plain) == "RUNNING"; }));

  std::string reply = Elasticd("request '{\"op\":\"register\",\"job_id\":" + fg +
                               ",\"ests\":2,\"plan\":\"auto\",\"class\":\"best-effort\","
                               "\"generation\":1}'");
  ASSERT_NE(reply.find("\"ok\": true"), std::string::npos) << reply;

  // elasticd offers the foreground nodes; the first background job starts on one of them.
  ASSERT_TRUE(WaitFor([&] { return State(early) == "RUNNING"; })) << ElasticdLog();
  const std::string early_node = Nodes(early);
  EXPECT_TRUE(early_node == "n1" || early_node == "n2") << early_node;
  // max_per_node = 1: the second goes to the other foreground node, the third never starts
  // (n3 has free cores but no foreground job).
  const std::string second =
      Submit("-N 1 --elastic --elastic-class=background -o /dev/null --wrap 'sleep 600'");
  ASSERT_TRUE(WaitFor([&] { return State(second) == "RUNNING"; })) << ElasticdLog();
  EXPECT_EQ(std::set<std::string>({early_node, Nodes(second)}),
            (std::set<std::string>{"n1", "n2"}));
  const std::string third =
      Submit("-N 1 --elastic --elastic-class=background -o /dev/null --wrap 'sleep 600'");
  ASSERT_TRUE(WaitFor([&] { return PartitionNodes().empty(); })) << PartitionNodes();
  EXPECT_EQ(State(third), "PENDING") << Nodes(third);

  // The foreground job is ordered to shrink to 1 node: it releases n2 (n1 is its batch host),
  // so the background job on n2 gives way (requeued) and the one on n1 stays.
  const std::string on_n2 = Nodes(early) == "n2" ? early : second;
  const std::string on_n1 = on_n2 == early ? second : early;
  std::string order = Elasticd("resize --job " + fg + " --nodes 1");
  ASSERT_NE(order.find("shrink to 1 node"), std::string::npos) << order;
  ASSERT_TRUE(WaitFor([&] { return State(on_n2) == "PENDING"; })) << ElasticdLog();
  EXPECT_NE(ElasticdLog().find("background job " + on_n2 + " gives way (requeued"),
            std::string::npos);
  EXPECT_EQ(State(on_n1), "RUNNING");
  EXPECT_EQ(Field(on_n2, "%r"), "BeginTime");  // requeued, not cancelled

  // The foreground job ends: the background job beside it gives way too, and none restarts.
  cluster().Run("scancel " + fg);
  ASSERT_TRUE(WaitFor([&] { return State(on_n1) == "PENDING"; })) << ElasticdLog();
  ASSERT_TRUE(WaitFor([&] { return PartitionNodes().empty(); }));
  for (const std::string& job : {early, second, third}) {
    EXPECT_EQ(State(job), "PENDING") << job << " on " << Nodes(job);
  }
  EXPECT_EQ(State(plain), "RUNNING") << "a normal-partition job was touched";
  cluster().Run("scancel " + plain + " " + early + " " + second + " " + third);
}

}  // namespace
}  // namespace elastic::testing
