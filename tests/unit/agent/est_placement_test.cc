// Which ESTs each rank hosts: balanced, contiguous, in rank order, for any W <= E.
#include "agent/est/est_placement.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace elastic::agent
