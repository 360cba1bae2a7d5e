// Tests for the agent's small common units: rank detection from the environment and SHA-256.
#include <gtest/gtest.h>

#include <map>

#include "common/env.h"
#include "agent/common/sha256.h"
#include "tests/common/fake_env.h"

namespace elastic::agent {
namespace {

using testing::FakeEnv;

TEST(IsPrimaryRank, FollowsOpenMpiThenSlurm) {
  EXPECT_TRUE(IsPrimaryRank(FakeEnv({})));
  EXPECT_TRUE(IsPrimaryRank(FakeEnv({{"SLURM_PROCID", "0"}})));
  EXPECT_FALSE(IsPrimaryRank(FakeEnv({{"SLURM_PROCID", "3"}})));
  EXPECT_TRUE(IsPrimaryRank(FakeEnv({{"OMPI_COMM_WORLD_RANK", "0"}})));
  EXPECT_FALSE(IsPrimaryRank(FakeEnv({{"OMPI_COMM_WORLD_RANK", "1"}})));
  // mpirun inside an allocation: every rank inherits the batch step's SLURM_PROCID=0.
  EXPECT_FALSE(IsPrimaryRank(FakeEnv({{"SLURM_PROCID", "0"}, {"OMPI_COMM_WORLD_RANK", "2"}})));
  EXPECT_TRUE(IsPrimaryRank(FakeEnv({{"SLURM_PROCID", "5"}, {"OMPI_COMM_WORLD_RANK", "0"}})));
}

TEST(ProcessEnv, ReadsTheRealEnvironment) {
  EnvLookup env = ProcessEnv();
  EXPECT_TRUE(env("PATH").has_value());
  EXPECT_FALSE(env("ELASTIC_AGENT_TEST_SURELY_UNSET").has_value());
}

TEST(Sha256, KnownVectors) {
  Sha256 empty;
  EXPECT_EQ(empty.HexDigest(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 abc;
  abc.Update("a", 1);
  abc.Update("bc", 2);  // incremental updates hash the concatenation
  EXPECT_EQ(abc.HexDigest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace elastic::agent
