// Tests for the job's shape under `elastic-agent run`: ranks per node from Slurm's GPU and task
// variables (GPUs win), refusals of malformed values, and the default EST count of the
// --elastic-est help (MAX nodes x ranks per node) with its divisibility check.
#include "agent/supervisor/job_shape.h"

#include <gtest/gtest.h>

#include <map>

#include "agent/supervisor/plan_inputs.h"
#include "common/toml_reader.h"
#include "tests/common/fake_env.h"

namespace elastic::agent {
namespace {

using testing::Env;
using testing::FakeEnv;

int Ranks(const Env& env) { return RanksPerNodeFromEnv(FakeEnv(env)).ranks; }

TEST(RanksPerNode, OneRankPerNodeWithoutGpusOrTasksPerNode) {
  RanksPerNode r = RanksPerNodeFromEnv(FakeEnv({}));
  EXPECT_EQ(r.ranks, 1);
  EXPECT_EQ(r.source, "");
}

TEST(RanksPerNode, CpuNodesRunTheTasksPerNode) {
  RanksPerNode r = RanksPerNodeFromEnv(FakeEnv({{"SLURM_NTASKS_PER_NODE", "2"}}));
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.source, "SLURM_NTASKS_PER_NODE=2");
}

TEST(RanksPerNode, GpuNodesRunOneRankPerGpuWhateverTheTaskCount) {
  EXPECT_EQ(Ranks({{"SLURM_GPUS_ON_NODE", "8"}, {"SLURM_NTASKS_PER_NODE", "1"}}), 8);
  EXPECT_EQ(Ranks({{"SLURM_GPUS_PER_NODE", "4"}}), 4);
  EXPECT_EQ(Ranks({{"SLURM_GPUS_PER_NODE", "a100:4"}, {"SLURM_NTASKS_PER_NODE", "2"}}), 4);
  EXPECT_EQ(Ranks({{"SLURM_JOB_GPUS", "0,1,2"}}), 3);
  // SLURM_GPUS_ON_NODE is the node's own count: it wins over the request's text.
  EXPECT_EQ(Ranks({{"SLURM_GPUS_ON_NODE", "2"}, {"SLURM_GPUS_PER_NODE", "4"}}), 2);
  // Zero GPUs (a CPU job that sets the variable) falls through to the task count.
  EXPECT_EQ(Ranks({{"SLURM_GPUS_ON_NODE", "0"}, {"SLURM_NTASKS_PER_NODE", "3"}}), 3);
  EXPECT_EQ(RanksPerNodeFromEnv(FakeEnv({{"SLURM_GPUS_ON_NODE", "8"}})).source,
            "SLURM_GPUS_ON_NODE=8");
}

TEST(RanksPerNode, MalformedVariablesAreRefusedNamingThem) {
  for (const auto& [name, value] : Env{{"SLURM_GPUS_ON_NODE", "four"},
                                       {"SLURM_GPUS_PER_NODE", "a100:"},
                                       {"SLURM_NTASKS_PER_NODE", "0"},
                                       {"SLURM_NTASKS_PER_NODE", "-2"},
                                       {"SLURM_NTASKS_PER_NODE", "99999"}}) {
    try {
      RanksPerNodeFromEnv(FakeEnv({{name, value}}));
      ADD_FAILURE() << name << "=" << value << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(name + "=" + value + ": expected"), std::string::npos)
          << e.what();
    }
  }
}

// srun's CPU flags: each rank its share of the node's CPUs; fewer CPUs than ranks (a --gres=gpu:2
// job holds one CPU per node unless it asks for more) overcommit instead of failing the step.
TEST(SrunCpuFlags, ASharePerRankElseOvercommit) {
  EXPECT_EQ(SrunCpuFlags(8, 2), (std::vector<std::string>{"--cpus-per-task=4"}));
  EXPECT_EQ(SrunCpuFlags(9, 2), (std::vector<std::string>{"--cpus-per-task=4"}));
  EXPECT_EQ(SrunCpuFlags(2, 2), (std::vector<std::string>{"--cpus-per-task=1"}));
  EXPECT_EQ(SrunCpuFlags(1, 2), (std::vector<std::string>{"--overcommit"}));
  EXPECT_EQ(SrunCpuFlags(7, 8), (std::vector<std::string>{"--overcommit"}));
  EXPECT_TRUE(SrunCpuFlags(0, 2).empty());
}

TEST(JobEstCount, AGivenCountIsKept) {
  EstCount e = JobEstCount(8, "train.ests", 64, 3, {2, "SLURM_NTASKS_PER_NODE=2"});
  EXPECT_EQ(e.ests, 8);
  EXPECT_EQ(e.origin, "train.ests");
  EXPECT_FALSE(e.defaulted);
  EXPECT_EQ(JobEstCount(4, "SLURM_ELASTIC_EST", 64, 3, {}).ests, 4);
}

TEST(JobEstCount, TheDefaultIsMaxNodesTimesRanksPerNode) {
  EstCount e = JobEstCount(1, "", 96, 3, {2, "SLURM_NTASKS_PER_NODE=2"});
  EXPECT_EQ(e.ests, 6);
  EXPECT_TRUE(e.defaulted);
  EXPECT_EQ(e.origin, "default: MAX nodes 3 x ranks per node 2 (SLURM_NTASKS_PER_NODE=2)");
  EXPECT_EQ(JobEstCount(1, "", 64, 4, {8, "SLURM_GPUS_ON_NODE=8"}).ests, 32);
  EXPECT_EQ(JobEstCount(1, "", 64, 1, {}).ests, 1);
}

TEST(JobEstCount, ADefaultThatDoesNotDivideTheBatchIsRefusedUpFront) {
  try {
    JobEstCount(1, "", 64, 3, {2, "SLURM_NTASKS_PER_NODE=2"});
    ADD_FAILURE() << "6 ESTs accepted for a global batch of 64";
  } catch (const ConfigError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("= 6 ESTs does not divide train.global_batch = 64"), std::string::npos)
        << text;
    EXPECT_NE(text.find("--elastic-est"), std::string::npos) << text;
  }
}

TEST(JobShape, ThePlanChoiceSeesTheRanksPerNode) {
  NodeAllocation a = AllocationFromEnv(
      2, FakeEnv({{"SLURM_JOB_CPUS_PER_NODE", "4(x2)"}, {"SLURM_NTASKS_PER_NODE", "2"}}));
  EXPECT_EQ(a.workers_per_node, 2);
  EXPECT_EQ(AllocationFromEnv(1, FakeEnv({{"SLURM_GPUS_ON_NODE", "8"}})).workers_per_node, 8);
}

}  // namespace
}  // namespace elastic::agent
