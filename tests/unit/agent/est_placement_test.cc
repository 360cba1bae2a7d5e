// Which ESTs each rank hosts: balanced, contiguous, in rank order, for any W <= E; by device
// speed on mixed devices (EasyScale's heterogeneous placement).
#include "agent/est/est_placement.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

TEST(HostedEsts, ContiguousBalancedBlocksCoverEveryEstOnce) {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    std::int64_t next = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      EstRange range = HostedEsts(8, rank, ranks);
      EXPECT_EQ(range.begin, next) << ranks << " ranks, rank " << rank;
      EXPECT_GE(range.size(), 8 / ranks);
      EXPECT_LE(range.size(), (8 + ranks - 1) / ranks);
      next = range.end;
    }
    EXPECT_EQ(next, 8);
  }
  EXPECT_EQ(HostedEsts(8, 1, 3), (EstRange{2, 5}));
  EXPECT_EQ(ToString(HostedEsts(8, 2, 3)), "[5,8)");
}

TEST(HostedEsts, RefusesMoreRanksThanEsts) {
  EXPECT_THROW(HostedEsts(2, 0, 3), ConfigError);
  EXPECT_THROW(HostedEsts(8, 3, 3), ConfigError);
}

std::vector<EstRange> Blocks(std::int64_t ests, const std::vector<double>& speeds) {
  std::vector<EstRange> blocks;
  for (int r = 0; r < static_cast<int>(speeds.size()); ++r) {
    blocks.push_back(HostedEstsBySpeed(ests, r, speeds));
  }
  return blocks;
}

TEST(HostedEstsBySpeed, BlocksFollowSpeedEqualSpeedsAreTheBalancedOnes) {
  // An a100 (2) beside a v100 (1): 16 ESTs split 10 + 6, not 8 + 8.
  EXPECT_EQ(Blocks(16, {2.0, 1.0}), (std::vector<EstRange>{{0, 10}, {10, 16}}));
  EXPECT_EQ(Blocks(8, {3.0, 1.0}), (std::vector<EstRange>{{0, 6}, {6, 8}}));
  EXPECT_EQ(Blocks(8, {1.0, 1.0, 1.0}), (std::vector<EstRange>{{0, 2}, {2, 5}, {5, 8}}));
  EXPECT_EQ(Blocks(8, {2.5, 2.5, 2.5}), Blocks(8, {1.0, 1.0, 1.0}));
  EXPECT_EQ(Blocks(3, {100.0, 1.0, 1.0}), (std::vector<EstRange>{{0, 1}, {1, 2}, {2, 3}}));
}

// Any speeds: contiguous blocks in rank order that cover every EST once, none empty, and a
// faster rank never hosts fewer ESTs than a slower one (largest remainders).
TEST(HostedEstsBySpeed, RandomSpeedsGiveContiguousNonEmptyBlocksOrderedBySpeed) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    const int ranks = 1 + static_cast<int>(rng() % 8);
    const std::int64_t ests = ranks + static_cast<std::int64_t>(rng() % 40);
    std::vector<double> speeds;
    for (int r = 0; r < ranks; ++r) speeds.push_back(0.25 * (1 + static_cast<int>(rng() % 16)));
    const std::vector<EstRange> blocks = Blocks(ests, speeds);
    std::int64_t next = 0;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(blocks[r].begin, next);
      EXPECT_GE(blocks[r].size(), 1);
      next = blocks[r].end;
      for (int q = 0; q < ranks; ++q) {
        if (speeds[q] > speeds[r]) {
          EXPECT_GE(blocks[q].size(), blocks[r].size());
        }
      }
    }
    EXPECT_EQ(next, ests);
  }
}

TEST(HostedEstsBySpeed, RefusesBadSpeedsAndTooManyRanks) {
  EXPECT_THROW(HostedEstsBySpeed(8, 0, {1.0, 0.0}), ConfigError);
  EXPECT_THROW(HostedEstsBySpeed(8, 0, {1.0, -2.0}), ConfigError);
  EXPECT_THROW(HostedEstsBySpeed(1, 0, {1.0, 2.0}), ConfigError);
}

TEST(DeviceSpeedFromEnv, UnsetIsOneBadTextIsRefusedByName) {
  std::map<std::string, std::string> vars;
  EnvLookup env = [&](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_EQ(DeviceSpeedFromEnv(env), 1.0);
  vars["ELASTIC_DEVICE_SPEED"] = "2.5";
  EXPECT_EQ(DeviceSpeedFromEnv(env), 2.5);
  for (const char* bad : {"", "fast", "0", "-1", "2x", "1e9", "nan"}) {
    vars["ELASTIC_DEVICE_SPEED"] = bad;
    try {
      DeviceSpeedFromEnv(env);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("ELASTIC_DEVICE_SPEED=\"" + std::string(bad) + "\""),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace elastic::agent
