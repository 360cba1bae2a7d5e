// Memory decides the plan on a live cluster (issue 27, Rubick §5.2): an elastic fmnist_cnn job
// whose train.device_memory is one byte below its dp replica on one node (the budget taken from
// `elastic-plan memory`, the supervisor's own estimator) runs a plan that fits there, switches
// when it grows to 4 nodes and again when it shrinks back to 1; the supervisor's log and
// AdminComment's plan= follow, and the job ends with the bits of an uninterrupted dp run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <regex>
#include <thread>
#include <vector>

#include "tests/common/agent_runs.h"
#include "tests/common/elasticd_cluster.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

class MemoryPlanSwitch : public ElasticdClusterSuite {
 protected:
  static void SetUpTestSuite() { StartWithElasticd(); }
};

std::string PlanTool() { return std::string(ELASTIC_BINARY_DIR) + "/tools/elastic-plan"; }

FmnistJob Job(const TempDir& dir, const std::string& name, const std::string& extra_train) {
  FmnistJob job;
  job.ests = 8;
  job.global_batch = 64;
  job.seed = 5;
  job.steps = 2000;  // the resizes are done by step ~300
  job.log_every = 500;
  job.extra_train = extra_train;
  job.checkpoint_dir = (dir.path() / name).string();
  return job;
}

// `plan` -> bytes from `elastic-plan memory --config F --ranks W`.
long long EstimatedBytes(const std::string& config, int ranks, const std::string& plan) {
  const CommandResult r = RunCommand(ShellQuote(PlanTool()) + " memory --config " +
                                     ShellQuote(config) + " --ranks " + std::to_string(ranks) +
                                     " 2>/dev/null");
  std::smatch m;
  const std::regex line("plan=" + plan + " ranks=" + std::to_string(ranks) + " bytes=([0-9]+)");
  if (r.exit_code != 0 || !std::regex_search(r.output, m, line)) return -1;
  return std::stoll(m[1]);
}

// The plan words of the supervisor's `generation N: plan P (` lines, in order.
std::vector<std::string> GenerationPlans(const std::string& text) {
  std::vector<std::string> plans;
  const std::regex word("generation [0-9]+: plan ([a-z-]+) \\(");
  for (const std::string& line : MatchingLines(text, "generation [0-9]+: plan [a-z-]+ \\(")) {
    std::smatch m;
    if (std::regex_search(line, m, word)) plans.push_back(m[1]);
  }
  return plans;
}

// Polls the AdminComment until it shows `plan=<plan>,`; the comment, or "" on timeout.
std::string WaitForPlan(const std::string& job, const std::string& plan, int timeout_s,
                        std::string (*comment)(const std::string&)) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    const std::string text = comment(job);
    if (text.find("plan=" + plan + ",") != std::string::npos) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return "";
}

TEST_F(MemoryPlanSwitch, ABudgetBelowTheDpReplicaSwitchesPlansOnGrowAndShrinkWithTheSameBits) {
  TempDir dir;
  const std::string probe = dir.Write("probe.toml", FmnistJobText(Job(dir, "probe", ""))).string();
  const long long dp_one = EstimatedBytes(probe, 1, "dp");
  ASSERT_GT(dp_one, 0);
  const long long budget = dp_one - 1;
  // What the supervisor will find: on one node a plan below dp fits, on 4 nodes pp does.
  ASSERT_LE(EstimatedBytes(probe, 1, "zero-offload"), budget);
  ASSERT_LE(EstimatedBytes(probe, 4, "pp"), budget);
  ASSERT_GT(EstimatedBytes(probe, 4, "dp"), budget);
  const std::string config = dir.Write("job.toml", FmnistJobText(Job(
      dir, "job", "device_memory = \"" + std::to_string(budget) + "\"\n"))).string();

  const std::string out = (dir.path() / "job.out").string();
  const auto [job, hold] = GrowToAllFourNodes(config, out);
  ASSERT_FALSE(job.empty());
  EXPECT_FALSE(WaitForPlan(job, "pp", 90, &AdminComment).empty()) << AdminComment(job);
  const std::string rigid = Submit("-N 3 --exclusive --wrap 'sleep 3600'");
  EXPECT_FALSE(WaitForNodes(job, 1, "1-4", 120).empty()) << AdminComment(job) << "\n" << Log();
  EXPECT_FALSE(WaitForPlan(job, "zero-offload", 90, &AdminComment).empty()) << AdminComment(job);
  const std::string state = cluster().WaitForJob(job, 900);
  cluster().Run("scancel " + rigid);
  const std::string text = RunCommand("cat " + ShellQuote(out)).output;
  ASSERT_EQ(state, "COMPLETED") << text;
  EXPECT_EQ(cluster().WaitForJob(hold, 10), "COMPLETED");

  // zero-offload on 1 node (dp is over the budget, gc recomputes), pp on 4, zero-offload again.
  const std::vector<std::string> plans = GenerationPlans(text);
  for (const std::string& line : MatchingLines(text, "generation [0-9]+: plan ")) {
    std::cout << line << "\n";  // for the record: each launch's plan and why
  }
  ASSERT_GE(plans.size(), 3u) << text;
  EXPECT_EQ(plans.front(), "zero-offload") << text;
  EXPECT_EQ(plans.back(), "zero-offload") << text;
  EXPECT_NE(std::find(plans.begin(), plans.end(), "pp"), plans.end()) << text;
  for (const std::string& plan : plans) EXPECT_NE(plan, "dp") << text;
  EXPECT_NE(text.find("over the memory budget of"), std::string::npos) << text;
  EXPECT_NE(text.find("resize pause"), std::string::npos) << text;

  // These plans are bitwise-safe: the bits of one process running dp with the same 8 ESTs.
  const std::string expected = OneProcessParamsHash(
      dir.Write("reference.toml", FmnistJobText(Job(dir, "reference", ""))).string());
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(LastParamsHash(text), expected) << text;
}

}  // namespace
}  // namespace elastic::testing
