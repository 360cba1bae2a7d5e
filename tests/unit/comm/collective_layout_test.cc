// The host arithmetic of the NCCL communicator: block layouts, the broadcasts of an unequal
// all-gather and the shared-GPU check (runs everywhere; the NCCL calls themselves need a GPU).
#include "agent/comm/collective_layout.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace elastic::agent {
namespace {

TEST(CollectiveLayoutTest, EightEstsOnThreeRanksGiveUnequalBlocksInRankOrder) {
  const std::vector<std::int64_t> slots = {3, 3, 2};  // E = 8 on W = 3
  const BlockLayout layout = BlocksOfItems(slots, 5);
  EXPECT_EQ(layout.counts, (std::vector<std::int64_t>{15, 15, 10}));
  EXPECT_EQ(layout.offsets, (std::vector<std::int64_t>{0, 15, 30}));
  EXPECT_EQ(layout.total, 40);
}

TEST(CollectiveLayoutTest, BroadcastsSkipEmptyBlocksAndKeepTheirPlaces) {
  const std::vector<std::int64_t> counts = {4, 0, 2, 0};
  const std::vector<BroadcastCall> calls = AllGatherBroadcasts(BlocksOfCounts(counts));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].root, 0);
  EXPECT_EQ(calls[0].offset, 0);
  EXPECT_EQ(calls[0].count, 4);
  EXPECT_EQ(calls[1].root, 2);
  EXPECT_EQ(calls[1].offset, 4);
  EXPECT_EQ(calls[1].count, 2);
}

TEST(CollectiveLayoutTest, EveryFloatOfTheGatheredBufferHasExactlyOneRoot) {
  const std::vector<std::int64_t> slots = {2, 1, 0, 4, 1};
  const BlockLayout layout = BlocksOfItems(slots, 7);
  std::vector<int> owner(static_cast<std::size_t>(layout.total), -1);
  for (const BroadcastCall& call : AllGatherBroadcasts(layout)) {
    for (std::int64_t i = call.offset; i < call.offset + call.count; ++i) {
      EXPECT_EQ(owner[static_cast<std::size_t>(i)], -1) << "float " << i << " sent twice";
      owner[static_cast<std::size_t>(i)] = call.root;
    }
  }
  std::vector<int> expected;
  for (std::size_t r = 0; r < slots.size(); ++r) {
    expected.insert(expected.end(), static_cast<std::size_t>(slots[r] * 7), static_cast<int>(r));
  }
  EXPECT_EQ(owner, expected);
}

TEST(CollectiveLayoutTest, NegativeCountsAreRejectedNamingTheRank) {
  const std::vector<std::int64_t> counts = {1, -2};
  try {
    BlocksOfCounts(counts);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(BlocksOfItems(std::vector<std::int64_t>{1}, -1), std::invalid_argument);
}

TEST(CollectiveLayoutTest, SharedDevicesAreFoundByIdentityNotPosition) {
  const std::vector<std::string> distinct = {"gpu-a", "gpu-b", "gpu-c"};
  EXPECT_FALSE(FirstSharedDevice(distinct).has_value());
  const std::vector<std::string> shared = {"gpu-a", "gpu-b", "gpu-a", "gpu-b"};
  const auto pair = FirstSharedDevice(shared);
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->first, 0);
  EXPECT_EQ(pair->second, 2);
}

}  // namespace
}  // namespace elastic::agent
