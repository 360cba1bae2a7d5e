// Tests for the deterministic sample order: permutations, epoch boundaries, EST slices, and
// pinned values that guard against an accidental change of the stream (which would change every
// params_sha256 a user has recorded).
#include "agent/data/sample_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace elastic::agent {
namespace {

bool IsPermutation(std::vector<std::int64_t> order) {
  std::sort(order.begin(), order.end());
  std::vector<std::int64_t> identity(order.size());
  std::iota(identity.begin(), identity.end(), std::int64_t{0});
  return order == identity;
}

TEST(EpochPermutation, IsAPermutationThatDependsOnSeedAndEpoch) {
  auto base = EpochPermutation(1000, 1, 0);
  EXPECT_TRUE(IsPermutation(base));
  EXPECT_EQ(base, EpochPermutation(1000, 1, 0));
  EXPECT_NE(base, EpochPermutation(1000, 2, 0));
  EXPECT_NE(base, EpochPermutation(1000, 1, 1));
  // seed + epoch must not collide: (1, 1) and (2, 0) are different streams.
  EXPECT_NE(EpochPermutation(1000, 1, 1), EpochPermutation(1000, 2, 0));
  EXPECT_TRUE(IsPermutation(EpochPermutation(1, 7, 3)));
}

TEST(EpochPermutation, PinnedValues) {
  EXPECT_EQ(EpochPermutation(10, 1, 0), (std::vector<std::int64_t>{2, 1, 8, 9, 6, 7, 3, 5, 0, 4}));
  EXPECT_EQ(EpochPermutation(10, 1, 1), (std::vector<std::int64_t>{4, 6, 2, 3, 7, 9, 0, 8, 5, 1}));
}

TEST(UniformBelow, StaysInRange) {
  std::mt19937_64 engine(5);
  EXPECT_EQ(UniformBelow(engine, 1), 0u);
  std::vector<int> counts(3);
  for (int i = 0; i < 3000; ++i) ++counts[UniformBelow(engine, 3)];
  for (int count : counts) EXPECT_NEAR(count, 1000, 150);
}

TEST(SampleOrder, StepsWalkEpochsAndSkipTheTail) {
  SampleOrder order(10, 4, 1);  // 2 steps per epoch; samples 8 and 9 of each epoch are skipped
  EXPECT_EQ(order.steps_per_epoch(), 2);
  auto epoch0 = EpochPermutation(10, 1, 0);
  auto epoch1 = EpochPermutation(10, 1, 1);
  auto step = [&](std::int64_t s) {
    auto span = order.StepIndices(s);
    return std::vector<std::int64_t>(span.begin(), span.end());
  };
  EXPECT_EQ(step(0), std::vector<std::int64_t>(epoch0.begin(), epoch0.begin() + 4));
  EXPECT_EQ(step(1), std::vector<std::int64_t>(epoch0.begin() + 4, epoch0.begin() + 8));
  EXPECT_EQ(step(2), std::vector<std::int64_t>(epoch1.begin(), epoch1.begin() + 4));
  // Going back (a resume) gives the same samples again.
  EXPECT_EQ(step(1), std::vector<std::int64_t>(epoch0.begin() + 4, epoch0.begin() + 8));
}

}  // namespace
}  // namespace elastic::agent
