// Tests for the drift watch: progress-line and model-size parsing, the first line of a step
// skipped, each generation's first window measured (with or without a prediction), one note per
// drift trigger.
#include "perf/rubick/plan_drift.h"

#include <gtest/gtest.h>

#include <cmath>

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
  ASSERT_TRUE(trigger.has_value());  // the generation's first window, past the threshold too
  EXPECT_TRUE(trigger->generation_point);
  EXPECT_TRUE(trigger->past_threshold);
  EXPECT_NEAR(trigger->measured, 600.0, 1e-9);
  EXPECT_DOUBLE_EQ(trigger->predicted, 1000.0);
  EXPECT_NEAR(trigger->drift, -0.4, 1e-12);
  const std::string& note = trigger->note;
  EXPECT_NE(note.find("generation 2: measured 600.0 samples/s vs predicted 1000.0 over its "
                      "first 5 reports: error -40.0%, past the refit threshold"),
            std::string::npos)
      << note;
  // The generation's mean unchanged: nothing new to measure, though the prediction is still off.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(watch.OnLine(Line(70 + 10 * i, 600.0))) << i;
  // Then the step slows down: once the mean of its 20 reports (600 x 15, 300 x 5: 504.5) moved
  // past 10 % from the last point, it is measured again.
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(watch.OnLine(Line(170 + 10 * i, 300.0))) << i;
  trigger = watch.OnLine(Line(210, 300.0));
  ASSERT_TRUE(trigger.has_value());
  EXPECT_FALSE(trigger->generation_point);
  EXPECT_TRUE(trigger->past_threshold);
  EXPECT_NEAR(trigger->measured, 600.0 * std::pow(0.5, 0.25), 1e-6);
  EXPECT_NE(trigger->note.find("generation 2: measured 504.5 samples/s vs predicted 1000.0 over "
                               "its 20 reports: the model's drift is -50%"),
            std::string::npos)
      << trigger->note;
  // After a refit the running step is predicted anew; the generation's mean is within 10 % of
  // it, and swings of single windows do not trigger.
  watch.Repredict(540.0);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(watch.OnLine(Line(220 + i, i < 5 ? 500.0 : 760.0)));
}

// Every generation gives one point from its first window; accurate predictions nothing more.
TEST(PlanDrift, EachGenerationIsMeasuredOnceAndAccuratePredictionsStayQuiet) {
  PlanDriftWatch watch;
  for (std::uint64_t generation : {1, 2}) {
    watch.StartGeneration(generation, 1000.0);
    int points = 0;
    for (int i = 0; i < 20; ++i) {
      if (std::optional<DriftTrigger> t = watch.OnLine(Line(i, i % 2 ? 1100.0 : 1000.0))) {
        ++points;
        EXPECT_TRUE(t->generation_point);
        EXPECT_FALSE(t->past_threshold);
        EXPECT_EQ(i, 5);  // after the skipped first line and 5 reports
        EXPECT_NEAR(t->measured, std::exp((2 * std::log(1000.0) + 3 * std::log(1100.0)) / 5),
                    1e-6);
        EXPECT_NE(t->note.find("error +5.9%"), std::string::npos) << t->note;
      }
    }
    EXPECT_EQ(points, 1) << generation;
  }
}

TEST(PlanDrift, AStepWithoutAPredictionIsMeasuredToo) {
  PlanDriftWatch watch;
  watch.StartGeneration(3, 0.0);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(watch.OnLine(Line(i, 250.0)));
  std::optional<DriftTrigger> t = watch.OnLine(Line(5, 250.0));
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->generation_point);
  EXPECT_EQ(t->predicted, 0.0);
  EXPECT_EQ(t->note,
            "generation 3: measured 250.0 samples/s over its first 5 reports (no prediction yet)");
  for (int i = 6; i < 30; ++i) EXPECT_FALSE(watch.OnLine(Line(i, 1.0)));  // nothing to compare
}

TEST(PlanDrift, TheModelSizeLineRoundTrips) {
  const std::string line = FormatModelSizeLine(11'689'512, 10);
  EXPECT_EQ(line, "elastic-agent: model params=11689512 blocks=10");
  std::optional<ModelSize> size = ParseModelSizeLine(line);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->params, 11'689'512.0);
  EXPECT_EQ(size->blocks, 10);
  for (const char* bad : {"elastic-agent: model params=0 blocks=1",
                          "elastic-agent: model params=5 blocks=0",
                          "elastic-agent: model params=5 blocks=2x",
                          "elastic-agent: model params=-5 blocks=2",
                          "elastic-agent: model params=5",
                          "step=1 loss=1 samples_per_s=2"}) {
    EXPECT_FALSE(ParseModelSizeLine(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace elastic::agent
