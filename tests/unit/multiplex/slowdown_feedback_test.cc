// SlowdownFeedback with an injected time: learning the solo baseline, marking an operator
// sensitive from measured ratios, the retry probe, and unmarking.
#include "agent/multiplex/slowdown_feedback.h"

#include <gtest/gtest.h>

namespace elastic::agent::multiplex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class SlowdownFeedbackTest : public ::testing::Test {
 protected:
  SlowdownFeedbackTest() {
    options_.sensitive_ratio = 1.5;
    options_.min_samples = 3;
    options_.window = 5;
    options_.retry_after = seconds(10);
  }

  void Runs(SlowdownFeedback& feedback, std::string_view op, int n, milliseconds d,
            bool colocated) {
    for (int i = 0; i < n; ++i) {
      feedback.Record(op, d, colocated, now_);
      now_ += milliseconds(100);
    }
  }

  FeedbackOptions options_;
  TimePoint now_{};
};

TEST_F(SlowdownFeedbackTest, DefaultsArePinned) {
  const FeedbackOptions defaults;
  EXPECT_DOUBLE_EQ(defaults.sensitive_ratio, 1.5);
  EXPECT_EQ(defaults.min_samples, 3u);
  EXPECT_EQ(defaults.window, 8u);
  EXPECT_EQ(defaults.retry_after, seconds(2));
}

TEST_F(SlowdownFeedbackTest, UnknownOperatorRunsAloneUntilItHasASoloBaseline) {
  SlowdownFeedback feedback(options_);
  EXPECT_EQ(feedback.Decide("conv1", now_), Placement::kIsolate);
  Runs(feedback, "conv1", 2, milliseconds(10), false);
  EXPECT_EQ(feedback.Decide("conv1", now_), Placement::kIsolate);
  Runs(feedback, "conv1", 1, milliseconds(10), false);
  EXPECT_EQ(feedback.Decide("conv1", now_), Placement::kColocate);
  EXPECT_EQ(feedback.Decide("conv2", now_), Placement::kIsolate);  // learnt per operator
}

TEST_F(SlowdownFeedbackTest, ModestSlowdownStaysColocated) {
  SlowdownFeedback feedback(options_);
  Runs(feedback, "fc", 3, milliseconds(10), false);
  Runs(feedback, "fc", 5, milliseconds(14), true);  // ratio 1.4 <= 1.5
  EXPECT_FALSE(feedback.IsSensitive("fc"));
  EXPECT_EQ(feedback.Decide("fc", now_), Placement::kColocate);
  const auto report = feedback.Report();
  ASSERT_EQ(report.size(), 1u);
  ASSERT_TRUE(report[0].ratio.has_value());
  EXPECT_NEAR(*report[0].ratio, 1.4, 1e-9);
}

TEST_F(SlowdownFeedbackTest, LargeSlowdownMarksSensitiveAfterMinSamples) {
  SlowdownFeedback feedback(options_);
  Runs(feedback, "allreduce", 3, milliseconds(10), false);
  Runs(feedback, "allreduce", 2, milliseconds(25), true);
  EXPECT_FALSE(feedback.IsSensitive("allreduce"));  // two co-located samples are not enough
  Runs(feedback, "allreduce", 1, milliseconds(25), true);
  EXPECT_TRUE(feedback.IsSensitive("allreduce"));
  EXPECT_EQ(feedback.Decide("allreduce", now_), Placement::kIsolate);
}

TEST_F(SlowdownFeedbackTest, OneOutlierDoesNotMark) {
  SlowdownFeedback feedback(options_);
  Runs(feedback, "conv", 3, milliseconds(10), false);
  Runs(feedback, "conv", 1, milliseconds(100), true);
  Runs(feedback, "conv", 2, milliseconds(11), true);
  EXPECT_FALSE(feedback.IsSensitive("conv"));
}

TEST_F(SlowdownFeedbackTest, SensitiveOperatorIsProbedAfterRetryAndUnmarkedWhenFine) {
  SlowdownFeedback feedback(options_);
  Runs(feedback, "op", 3, milliseconds(10), false);
  Runs(feedback, "op", 3, milliseconds(30), true);
  ASSERT_TRUE(feedback.IsSensitive("op"));
  const TimePoint marked = now_ - milliseconds(100);  // time of the judging sample
  // Isolated runs meanwhile only refresh the solo baseline.
  Runs(feedback, "op", 2, milliseconds(10), false);
  EXPECT_EQ(feedback.Decide("op", marked + seconds(10) - milliseconds(1)), Placement::kIsolate);
  now_ = marked + seconds(10);
  EXPECT_EQ(feedback.Decide("op", now_), Placement::kColocate);  // the probe
  // The probe is judged on fresh co-located runs only (the old 30 ms ones were dropped).
  Runs(feedback, "op", 3, milliseconds(12), true);
  EXPECT_FALSE(feedback.IsSensitive("op"));
  EXPECT_EQ(feedback.Decide("op", now_), Placement::kColocate);
}

TEST_F(SlowdownFeedbackTest, FailedProbeMarksAgainWithNewRetryTime) {
  SlowdownFeedback feedback(options_);
  Runs(feedback, "op", 3, milliseconds(10), false);
  Runs(feedback, "op", 3, milliseconds(30), true);
  now_ += seconds(10);
  ASSERT_EQ(feedback.Decide("op", now_), Placement::kColocate);
  Runs(feedback, "op", 3, milliseconds(40), true);
  const TimePoint judged = now_ - milliseconds(100);
  EXPECT_TRUE(feedback.IsSensitive("op"));
  EXPECT_EQ(feedback.Decide("op", judged + seconds(10) - milliseconds(1)), Placement::kIsolate);
  EXPECT_EQ(feedback.Decide("op", judged + seconds(10)), Placement::kColocate);
}

TEST_F(SlowdownFeedbackTest, SoloBaselineSlidesWithTheWindow) {
  SlowdownFeedback feedback(options_);
  Runs(feedback, "op", 5, milliseconds(10), false);
  Runs(feedback, "op", 5, milliseconds(20), false);  // the operator got slower on its own
  Runs(feedback, "op", 3, milliseconds(25), true);   // 1.25x the new baseline, 2.5x the old
  EXPECT_FALSE(feedback.IsSensitive("op"));
}

TEST_F(SlowdownFeedbackTest, ReportIsSortedByOperator) {
  SlowdownFeedback feedback(options_);
  Runs(feedback, "b", 1, milliseconds(1), false);
  Runs(feedback, "a", 2, milliseconds(1), true);
  const auto report = feedback.Report();
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].op, "a");
  EXPECT_EQ(report[0].colocated_samples, 2u);
  EXPECT_FALSE(report[0].ratio.has_value());
  EXPECT_EQ(report[1].op, "b");
  EXPECT_EQ(report[1].solo_samples, 1u);
}

}  // namespace
}  // namespace elastic::agent::multiplex
