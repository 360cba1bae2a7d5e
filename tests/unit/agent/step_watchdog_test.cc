// StepWatchdog: quiet while steps keep coming, fires once when they stop, never before the
// first beat, and not at all when disabled. Generous margins: this machine may be loaded.
#include "agent/train/step_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace elastic::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(StepWatchdog, FiresOnceWhenStepsStopAndNotWhileTheyComeOrBeforeTheFirst) {
  std::atomic<int> fired{0};
  std::atomic<long long> reported{-1};
  {
    StepWatchdog watchdog(seconds(1), [&](seconds since) {
      reported = since.count();
      ++fired;
    });
    std::this_thread::sleep_for(milliseconds(1600));  // not armed: start-up never counts
    EXPECT_EQ(fired.load(), 0);
    for (int i = 0; i < 60; ++i) {  // 0.6 s of steady progress
      watchdog.Beat();
      std::this_thread::sleep_for(milliseconds(10));
    }
    EXPECT_EQ(fired.load(), 0);
    const auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (fired.load() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(50));
    }
    std::this_thread::sleep_for(milliseconds(600));
  }
  EXPECT_EQ(fired.load(), 1);
  EXPECT_GE(reported.load(), 1);
}

TEST(StepWatchdog, ZeroTimeoutIsOff) {
  std::atomic<int> fired{0};
  {
    StepWatchdog watchdog(seconds(0), [&](seconds) { ++fired; });
    watchdog.Beat();
    std::this_thread::sleep_for(milliseconds(400));
  }
  EXPECT_EQ(fired.load(), 0);
}

}  // namespace
}  // namespace elastic::agent
