// Tests for the drift watch: progress-line parsing, the first line of a step skipped, one note
// per trigger, and steps without a prediction ignored.
#include "perf/rubick/plan_drift.h"

#include <gtest/gtest.h>

namespace elastic::agent {
namespace {

TEST(PlanDrift, ParsesOnlyProgressLines) {
  EXPECT_EQ(ParseProgressThroughput("step=20 loss=0.512345 samples_per_s=1834.5"), 1834.5);
  // train.host_probe appends the probe's time.
  EXPECT_EQ(ParseProgressThroughput("step=20 loss=0.5 samples_per_s=1834.5 probe_ms=2.105"),
            1834.5);
  EXPECT_FALSE(ParseProgressThroughput("elastic-agent: step=200 loss=0.1 params_sha256=ab"));
  EXPECT_FALSE(ParseProgressThroughput("step=20 loss=0.5"));
  EXPECT_FALSE(ParseProgressThroughput("step=20 loss=0.5 samples_per_s=fast"));
  EXPECT_FALSE(ParseProgressThroughput("xstep=20 loss=0.5 samples_per_s=1.0"));
}

std::string Line(int step, double rate) {
  return "step=" + std::to_string(step) + " loss=0.5 samples_per_s=" + std::to_string(rate);
}

TEST(PlanDrift, NotesARefitOncePerTrigger) {
  PlanDriftWatch watch;  // window 5, threshold 10%
  watch.StartGeneration(2, 1000.0);
  EXPECT_FALSE(watch.OnLine(Line(10, 10.0)));  // the first line (start-up) is skipped
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(watch.OnLine(Line(20 + 10 * i, 600.0))) << i;
  std::optional<DriftTrigger> trigger = watch.OnLine(Line(60, 600.0));
  ASSERT_TRUE(trigger.has_value());
  EXPECT_NEAR(trigger->measured, 600.0, 1e-9);
  EXPECT_DOUBLE_EQ(trigger->predicted, 1000.0);
  EXPECT_NEAR(trigger->drift, -0.4, 1e-12);
  const std::string& note = trigger->note;
  EXPECT_NE(note.find("generation 2: measured 600.0 samples/s vs predicted 1000.0"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("-40%"), std::string::npos) << note;
  EXPECT_FALSE(watch.OnLine(Line(70, 600.0)));  // the window starts over
}

TEST(PlanDrift, AccuratePredictionsAndUnpredictedStepsStayQuiet) {
  PlanDriftWatch watch;
  watch.StartGeneration(1, 1000.0);
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(watch.OnLine(Line(i, 1050.0)));
  watch.StartGeneration(2, 0.0);  // no prediction: nothing to compare
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(watch.OnLine(Line(i, 1.0)));
}

}  // namespace
}  // namespace elastic::agent
