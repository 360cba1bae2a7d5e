// SlopeIndex: candidates per device type by slope; Set replaces a job's entry and Erase drops it;
// LowestChain gives the jobs a scan with ties within eps could pick, in job order, skipping
// those asked; a NaN slope is set aside and reported.
#include "scheduler/policy/rubick_slope_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

namespace elastic::policy::rubick {
namespace {

using Jobs = std::vector<std::size_t>;
const TypeFlags kType0 = {true, false};
const TypeFlags kBoth = {true, true};
auto kNone = [](std::size_t) { return false; };

TEST(SlopeIndexTest, LowestPerTypeFollowsSetAndErase) {
  SlopeIndex index(2);
  EXPECT_EQ(index.Lowest(0), std::numeric_limits<double>::infinity());
  index.Set(4, 0.5, 0.0, kType0);
  index.Set(2, 0.7, 0.0, kBoth);
  EXPECT_DOUBLE_EQ(index.Lowest(0), 0.5);
  EXPECT_DOUBLE_EQ(index.Lowest(1), 0.7);
  index.Set(4, 0.9, 0.0, kBoth);  // job 4 changed: its old entry goes
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
  index.Set(9, 1.0, 0.0, kType0);
  index.Set(3, 1.0 + 1.5 * eps, 0.0, kType0);  // within 2 eps of the one below: chained
  index.Set(5, 1.0 + 3.0 * eps, 0.0, kType0);
  index.Set(1, 1.0 + 10 * eps, 0.0, kType0);  // past the gap
  index.Set(0, 2.0, 0.0, kType0);
  EXPECT_EQ(index.LowestChain(0, eps, kNone), (Jobs{3, 5, 9}));  // job order
  EXPECT_EQ(index.LowestChain(0, eps, [](std::size_t j) { return j == 9; }), (Jobs{3, 5}));
  EXPECT_EQ(index.LowestChain(0, eps, [](std::size_t j) { return j != 0; }), (Jobs{0}));
  EXPECT_EQ(index.LowestChain(1, eps, kNone), Jobs{});
}

TEST(SlopeIndexTest, OneSlopeChainPicksTheLowestTieWithoutAScan) {
  SlopeIndex index(1);
  const double eps = 1e-9;
  index.Set(4, 1.0, -50.0, {true});  // submitted at 50: the latest
  index.Set(2, 1.0, -50.0, {true});
  index.Set(1, 1.0, -10.0, {true});
  index.Set(7, 1.0 + 3 * eps, 0.0, {true});  // past 2 x eps
  EXPECT_EQ(index.LowestOfOneSlope(0, eps, kNone), std::optional<std::size_t>(2));
  EXPECT_EQ(index.LowestOfOneSlope(0, eps, [](std::size_t j) { return j == 2; }),
            std::optional<std::size_t>(4));
  index.Set(7, 1.0 + eps, 0.0, {true});  // chained: two slopes, scan them
  EXPECT_EQ(index.LowestOfOneSlope(0, eps, kNone), std::nullopt);
  EXPECT_EQ(index.LowestChain(0, eps, kNone), (Jobs{1, 2, 4, 7}));
  index.Set(7, 2.0, std::nan(""), {true});
  EXPECT_TRUE(index.has_nan());
  index.Erase(7);
  EXPECT_EQ(index.LowestOfOneSlope(0, eps, [](std::size_t) { return true; }), std::nullopt);
}

TEST(SlopeIndexTest, InfiniteSlopesChainOnlyWithEachOther) {
  SlopeIndex index(1);
  const double inf = std::numeric_limits<double>::infinity();
  index.Set(2, inf, 0.0, {true});
  index.Set(1, inf, 0.0, {true});
  EXPECT_EQ(index.LowestChain(0, 1e-9, kNone), (Jobs{1, 2}));
  EXPECT_EQ(index.LowestOfOneSlope(0, 1e-9, kNone), std::nullopt);  // inf ties with nothing
  index.Set(3, 5.0, 0.0, {true});
  EXPECT_EQ(index.LowestChain(0, 1e-9, kNone), Jobs{3});
}

TEST(SlopeIndexTest, NanSlopesAreReported) {
  SlopeIndex index(1);
  index.Set(0, std::nan(""), 0.0, {true});
  EXPECT_TRUE(index.has_nan());
  EXPECT_EQ(index.Lowest(0), std::numeric_limits<double>::infinity());
  index.Set(0, 1.0, 0.0, {true});
  EXPECT_FALSE(index.has_nan());
  EXPECT_DOUBLE_EQ(index.Lowest(0), 1.0);
}

}  // namespace
}  // namespace elastic::policy::rubick
