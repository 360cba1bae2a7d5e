// IdleFiller with a scripted clock: a slot first only learns, a piece of unknown length runs once
// to be measured, then only pieces predicted to end before the message arrives start, and a
// message that comes early costs at most one piece (and shortens later predictions).
#include "agent/multiplex/idle_filler.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace elastic::agent::multiplex {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

class ScriptedClock final : public Clock {
 public:
  TimePoint Now() const override { return now; }
  TimePoint now{};
};

// Each piece moves the clock by `piece` (the work runs on the waiting thread).
class TimedWork final : public BackgroundWork {
 public:
  TimedWork(ScriptedClock& clock, Duration piece) : clock_(clock), piece(piece) {}
  bool HasWork() const override { return remaining != 0; }
  void RunPiece() override {
    if (fail) throw std::runtime_error("background piece failed");
    clock_.now += piece;
    ++ran;
    if (remaining > 0) --remaining;
  }
  int ran = 0;
  int remaining = -1;  // < 0: unlimited
  bool fail = false;

 private:
  ScriptedClock& clock_;

 public:
  Duration piece;
};

class IdleFillerTest : public ::testing::Test {
 protected:
  // One wait whose message arrives `arrival` after it starts; each poll costs 10 us. Returns how
  // late the wait ended past the arrival.
  Duration WaitFor(IdleFiller& filler, const std::string& slot, Duration arrival) {
    const TimePoint due = clock_.now + arrival;
    filler.Wait(slot, [&] {
      clock_.now += microseconds(10);
      return clock_.now >= due;
    });
    return clock_.now - due;
  }

  ScriptedClock clock_;
};

TEST_F(IdleFillerTest, AFirstWaitAtASlotOnlyLearns) {
  TimedWork work(clock_, milliseconds(1));
  IdleFiller filler(work, clock_);
  EXPECT_LT(WaitFor(filler, "fwd.1", milliseconds(10)), microseconds(20));
  EXPECT_EQ(work.ran, 0);
  EXPECT_EQ(filler.stats().waits, 1u);
  EXPECT_EQ(filler.stats().pieces, 0u);
}

TEST_F(IdleFillerTest, FillsAPredictedIdleSlotWithoutDelayingTheWaiter) {
  TimedWork work(clock_, milliseconds(1));
  IdleFiller filler(work, clock_);
  WaitFor(filler, "fwd.1", milliseconds(10));
  for (int i = 0; i < 5; ++i) {
    const int before = work.ran;
    // Pieces of 1 ms fit 9 times into 10 ms with the polls between them, never past the arrival.
    EXPECT_LT(WaitFor(filler, "fwd.1", milliseconds(10)), microseconds(20)) << "wait " << i;
    EXPECT_GE(work.ran - before, 8) << "wait " << i;
    EXPECT_LE(work.ran - before, 10) << "wait " << i;
  }
  EXPECT_EQ(filler.stats().overrun, Duration::zero());
  EXPECT_EQ(filler.stats().background, work.ran * milliseconds(1));
}

TEST_F(IdleFillerTest, APieceLongerThanTheIdleTimeRunsOnceToBeMeasuredThenNever) {
  TimedWork work(clock_, milliseconds(5));
  IdleFiller filler(work, clock_);
  WaitFor(filler, "bwd.2", milliseconds(3));
  // Its length is unknown: it runs once and overruns the message by about 2 ms.
  const Duration late = WaitFor(filler, "bwd.2", milliseconds(3));
  EXPECT_EQ(work.ran, 1);
  EXPECT_GE(late, milliseconds(2));
  EXPECT_LE(late, milliseconds(2) + microseconds(20));
  EXPECT_GE(filler.stats().overrun, milliseconds(5));
  for (int i = 0; i < 10; ++i) {
    EXPECT_LT(WaitFor(filler, "bwd.2", milliseconds(3)), microseconds(20));
  }
  EXPECT_EQ(work.ran, 1);
}

TEST_F(IdleFillerTest, AnEarlyMessageCostsAtMostOnePieceAndShortensThePrediction) {
  TimedWork work(clock_, milliseconds(2));
  IdleFiller filler(work, clock_);
  for (int i = 0; i < 4; ++i) WaitFor(filler, "fwd.3", milliseconds(20));
  // The message now comes after 1 ms: the piece running then finishes first.
  for (int i = 0; i < 8; ++i) {
    EXPECT_LE(WaitFor(filler, "fwd.3", milliseconds(1)), milliseconds(2)) << "wait " << i;
  }
  // The window now holds only short (conservative) idle times: no 2 ms piece fits any more.
  const int before = work.ran;
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT(WaitFor(filler, "fwd.3", milliseconds(1)), microseconds(20));
  }
  EXPECT_EQ(work.ran, before);
}

TEST_F(IdleFillerTest, SlotsAreLearntSeparately) {
  TimedWork work(clock_, milliseconds(1));
  IdleFiller filler(work, clock_);
  WaitFor(filler, "fwd.1", milliseconds(10));
  WaitFor(filler, "fwd.1", milliseconds(10));
  const int after_fwd = work.ran;
  EXPECT_GT(after_fwd, 0);
  WaitFor(filler, "bwd.1", milliseconds(10));  // new slot: learns only
  EXPECT_EQ(work.ran, after_fwd);
  WaitFor(filler, "short", microseconds(0));
  WaitFor(filler, "short", microseconds(0));  // nothing fits a zero wait
  EXPECT_EQ(work.ran, after_fwd);
}

TEST_F(IdleFillerTest, AJobWithNothingLeftRunsNothing) {
  TimedWork work(clock_, milliseconds(1));
  work.remaining = 3;
  IdleFiller filler(work, clock_);
  for (int i = 0; i < 4; ++i) WaitFor(filler, "fwd.1", milliseconds(10));
  EXPECT_EQ(work.ran, 3);
  EXPECT_EQ(filler.stats().pieces, 3u);
}

TEST_F(IdleFillerTest, APieceThatThrowsReachesTheWaiter) {
  TimedWork work(clock_, milliseconds(1));
  IdleFiller filler(work, clock_);
  WaitFor(filler, "fwd.1", milliseconds(10));
  work.fail = true;
  EXPECT_THROW(WaitFor(filler, "fwd.1", milliseconds(10)), std::runtime_error);
}

}  // namespace
}  // namespace elastic::agent::multiplex
