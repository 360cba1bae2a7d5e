// Tests for config durations.
#include "common/duration.h"

#include <gtest/gtest.h>

namespace elastic {
namespace {

using std::chrono::milliseconds;

TEST(Duration, ParsesEveryUnit) {
  EXPECT_EQ(ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(ParseDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(ParseDuration("2h"), milliseconds(7'200'000));
  EXPECT_EQ(ParseDuration("0s"), milliseconds(0));
}

TEST(Duration, RejectsMalformed) {
  for (const char* bad : {"", "s", "30", "30 s", "-5s", "1.5s", "5d", "30S", "99999999999999999h"}) {
    EXPECT_FALSE(ParseDuration(bad).has_value()) << bad;
  }
}

TEST(Duration, FormatsInLargestWholeUnit) {
  EXPECT_EQ(FormatDuration(milliseconds(7'200'000)), "2h");
  EXPECT_EQ(FormatDuration(milliseconds(90'000)), "90s");
  EXPECT_EQ(FormatDuration(milliseconds(1'500)), "1500ms");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
}

}  // namespace
}  // namespace elastic
