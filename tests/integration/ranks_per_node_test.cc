// Several ranks per node on a real cluster with elasticd (issue 26): `sbatch -N 2
// --ntasks-per-node=2 --elastic` runs 4 ranks with the default EST count (MAX nodes x ranks per
// node = 4) and ends with the bits of a one-process run; a `-N 1-3 --ntasks-per-node=2` job
// grows and shrinks by whole nodes, 2 ranks on each, with 6 ESTs throughout and the same bits.
#include <gtest/gtest.h>

#include <regex>

#include "tests/common/agent_runs.h"
#include "tests/common/elasticd_cluster.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

class RanksPerNode : public ElasticdClusterSuite {
 protected:
  static void SetUpTestSuite() { StartWithElasticd(); }
};

// The Fashion-MNIST CNN without train.ests (the supervisor's default decides), or with `ests`.
std::string Config(const TempDir& dir, const std::string& name, int ests, int global_batch,
                   int steps) {
  FmnistJob job;
  job.ests = ests;
  job.global_batch = global_batch;
  job.seed = 11;
  job.steps = steps;
  job.log_every = 500;
  job.checkpoint_dir = (dir.path() / name).string();
  return dir.Write(name + ".toml", FmnistJobText(job)).string();
}

std::string Reference(const TempDir& dir, int ests, int global_batch, int steps) {
  const std::string config = Config(dir, "reference", ests, global_batch, steps);
  return OneProcessParamsHash(config);
}

std::string JobOutput(const std::string& path) { return RunCommand("cat " + ShellQuote(path)).output; }

TEST_F(RanksPerNode, TwoNodesTimesTwoTasksRunFourRanksWithFourEstsByDefault) {
  TempDir dir;
  const std::string config = Config(dir, "job", /*ests=*/0, 64, 40);
  const std::string out = (dir.path() / "job.out").string();
  const std::string job = Submit("-N 2 --ntasks-per-node=2 --elastic -o " + out + " --wrap " +
                                 ShellQuote(AgentPath() + " run --config " + config));
  ASSERT_EQ(cluster().WaitForJob(job, 300), "COMPLETED") << JobOutput(out);
  const std::string text = JobOutput(out);
  EXPECT_NE(text.find("2 rank(s) per node (SLURM_NTASKS_PER_NODE=2), 4 ESTs (default: MAX "
                      "nodes 2 x ranks per node 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("samples: ests=4 ranks=4 hosted="), std::string::npos) << text;
  const std::string reference = Reference(dir, 4, 64, 40);
  ASSERT_FALSE(reference.empty());
  EXPECT_EQ(LastParamsHash(text), reference) << text;
}

TEST_F(RanksPerNode, AOneToThreeNodeJobResizesByWholeNodesOfTwoRanks) {
  TempDir dir;
  // The resizes are done within seconds; 3000 steps keep the job running that long even on an
  // idle machine (1000 steps took 6 s: it ended before an 8 s holder did, and never grew).
  constexpr int kSteps = 3000;
  const std::string config = Config(dir, "job", /*ests=*/0, 48, kSteps);
  const std::string out = (dir.path() / "job.out").string();
  const std::string hold = Submit("-N 3 --exclusive --wrap 'sleep 3600'");
  const std::string job = Submit("-N 1-3 --ntasks-per-node=2 --exclusive --elastic -o " + out +
                                 " --wrap " + ShellQuote(AgentPath() + " run --config " + config));
  // Registered on one node, it grows to all 3 once the holder is gone; a rigid 3-node job then
  // shrinks it.
  ASSERT_FALSE(WaitForNodes(job, 1, "1-3", 120).empty()) << AdminComment(job) << "\n" << Log();
  cluster().Run("scancel " + hold);
  ASSERT_FALSE(WaitForNodes(job, 3, "1-3", 120).empty()) << AdminComment(job) << "\n"
                                                         << Log() << JobOutput(out);
  // The rigid job keeps its nodes until the elastic one is done: 6 ranks on this 2-core host
  // are slow, 2 are not.
  const std::string rigid = Submit("-N 3 --exclusive --wrap 'sleep 3600'");
  EXPECT_FALSE(WaitForNodes(job, 1, "1-3", 120).empty()) << AdminComment(job) << "\n" << Log();
  const std::string state = cluster().WaitForJob(job, 900);
  cluster().Run("scancel " + rigid);
  ASSERT_EQ(state, "COMPLETED") << JobOutput(out);
  EXPECT_EQ(cluster().WaitForJob(hold, 10).rfind("CANCELLED", 0), 0u);  // "CANCELLED by 0"

  const std::string text = JobOutput(out);
  EXPECT_NE(text.find("6 ESTs (default: MAX nodes 3 x ranks per node 2"), std::string::npos)
      << text;
  // Every generation: whole nodes, two ranks each, the same 6 ESTs.
  for (const char* ranks : {"ranks=2 ", "ranks=6 "}) {
    EXPECT_NE(text.find(std::string("samples: ests=6 ") + ranks), std::string::npos)
        << ranks << "\n" << text;
  }
  EXPECT_NE(text.find(": srun on 3 node(s) "), std::string::npos) << text;
  EXPECT_NE(text.find(", 6 rank(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("resize pause"), std::string::npos) << text;
  EXPECT_EQ(std::regex_search(text, std::regex("samples: ests=(?!6 )")), false) << text;
  const std::string reference = Reference(dir, 6, 48, kSteps);
  ASSERT_FALSE(reference.empty());
  EXPECT_EQ(LastParamsHash(text), reference) << text;
}

}  // namespace
}  // namespace elastic::testing
