// LogThrottle: a flood from one source is capped per window and counted; other sources are not
// affected; memory stays bounded.
#include "scheduler/daemon/log_throttle.h"

#include <gtest/gtest.h>

namespace elastic::daemon {
namespace {

int Allowed(LogThrottle& throttle, const std::string& source, std::int64_t now, int tries) {
  int allowed = 0;
  std::uint64_t suppressed = 0;
  for (int i = 0; i < tries; ++i) allowed += throttle.Allow(source, now, suppressed);
  return allowed;
}

TEST(LogThrottle, CapsAFloodPerWindowAndReportsTheSuppressedCountWithTheNextLine) {
  LogThrottle throttle(3, 60);
  EXPECT_EQ(Allowed(throttle, "uid 1000", 100, 1000), 3);
  EXPECT_EQ(Allowed(throttle, "uid 1000", 159, 10), 0);  // same window
  std::uint64_t suppressed = 0;
  ASSERT_TRUE(throttle.Allow("uid 1000", 160, suppressed));  // next window
  EXPECT_EQ(suppressed, 1007u);
  EXPECT_EQ(WithSuppressed("refused", suppressed),
            "refused (1007 similar message(s) from this source suppressed)");
  ASSERT_TRUE(throttle.Allow("uid 1000", 161, suppressed));
  EXPECT_EQ(suppressed, 0u);  // reported once
  EXPECT_EQ(WithSuppressed("refused", 0), "refused");
}

TEST(LogThrottle, OneSourcesFloodDoesNotSilenceAnother) {
  LogThrottle throttle(2, 60);
  EXPECT_EQ(Allowed(throttle, "unauthenticated", 0, 500), 2);
  EXPECT_EQ(Allowed(throttle, "uid 0", 0, 2), 2);
  EXPECT_EQ(Allowed(throttle, "uid 65534", 1, 5), 2);
}

TEST(LogThrottle, RemembersBoundedSourcesForgettingTheOldestWindow) {
  LogThrottle throttle(1, 60, /*max_sources=*/2);
  std::uint64_t suppressed = 0;
  EXPECT_TRUE(throttle.Allow("a", 0, suppressed));
  EXPECT_FALSE(throttle.Allow("a", 1, suppressed));
  EXPECT_TRUE(throttle.Allow("b", 2, suppressed));
  EXPECT_TRUE(throttle.Allow("c", 3, suppressed));  // "a" (oldest window) forgotten
  EXPECT_FALSE(throttle.Allow("b", 4, suppressed));  // "b" still remembered
  EXPECT_TRUE(throttle.Allow("a", 5, suppressed));   // "a" starts afresh
}

}  // namespace
}  // namespace elastic::daemon
