// SlopeIndex: candidates per device type by slope; Set replaces a job's entry and Erase drops it;
// LowestChain gives the jobs a scan with ties within eps could pick, in job order, skipping
// those asked; a NaN slope is set aside and reported.
#include "scheduler/policy/rubick_slope_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace elastic::policy::rubick {
namespace {

using Jobs = std::vector<std::size_t>;
const std::vector<bool> kType0 = {true, false};
const std::vector<bool> kBoth = {true, true};
auto kNone = [](std::size_t) { return false; };

TEST(SlopeIndexTest, LowestPerTypeFollowsSetAndErase) {
  SlopeIndex index(2);
  EXPECT_EQ(index.Lowest(0), std::numeric_limits<double>::infinity());
  index.Set(4, 0.5, kType0);
  index.Set(2, 0.7, kBoth);
  EXPECT_DOUBLE_EQ(index.Lowest(0), 0.5);
  EXPECT_DOUBLE_EQ(index.Lowest(1), 0.7);
  index.Set(4, 0.9, kBoth);  // job 4 changed: its old entry goes
  EXPECT_DOUBLE_EQ(index.Lowest(0), 0.7);
  EXPECT_DOUBLE_EQ(index.Lowest(1), 0.7);
  index.Erase(2);
  index.Erase(7);  // never set: nothing to do
  EXPECT_DOUBLE_EQ(index.Lowest(0), 0.9);
  index.Erase(4);
  EXPECT_EQ(index.Lowest(1), std::numeric_limits<double>::infinity());
}

TEST(SlopeIndexTest, LowestChainStopsAtAGapOverTwiceEps) {
  SlopeIndex index(2);
  const double eps = 1e-9;
  index.Set(9, 1.0, kType0);
  index.Set(3, 1.0 + 1.5 * eps, kType0);  // within 2 eps of the one below: chained
  index.Set(5, 1.0 + 3.0 * eps, kType0);
  index.Set(1, 1.0 + 10 * eps, kType0);  // past the gap
  index.Set(0, 2.0, kType0);
  EXPECT_EQ(index.LowestChain(0, eps, kNone), (Jobs{3, 5, 9}));  // job order
  EXPECT_EQ(index.LowestChain(0, eps, [](std::size_t j) { return j == 9; }), (Jobs{3, 5}));
  EXPECT_EQ(index.LowestChain(0, eps, [](std::size_t j) { return j != 0; }), (Jobs{0}));
  EXPECT_EQ(index.LowestChain(1, eps, kNone), Jobs{});
}

TEST(SlopeIndexTest, InfiniteSlopesChainOnlyWithEachOther) {
  SlopeIndex index(1);
  const double inf = std::numeric_limits<double>::infinity();
  index.Set(2, inf, {true});
  index.Set(1, inf, {true});
  EXPECT_EQ(index.LowestChain(0, 1e-9, kNone), (Jobs{1, 2}));
  index.Set(3, 5.0, {true});
  EXPECT_EQ(index.LowestChain(0, 1e-9, kNone), Jobs{3});
}

TEST(SlopeIndexTest, NanSlopesAreReported) {
  SlopeIndex index(1);
  index.Set(0, std::nan(""), {true});
  EXPECT_TRUE(index.has_nan());
  EXPECT_EQ(index.Lowest(0), std::numeric_limits<double>::infinity());
  index.Set(0, 1.0, {true});
  EXPECT_FALSE(index.has_nan());
  EXPECT_DOUBLE_EQ(index.Lowest(0), 1.0);
}

}  // namespace
}  // namespace elastic::policy::rubick
