// Online-refit policy: drift of measured against predicted throughput over a window.
#include "perf/rubick/drift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace elastic::perf {
namespace {

TEST(DriftDetector, NoVerdictBeforeTheWindowFills) {
  DriftDetector detector({.threshold = 0.1, .window = 3});
  EXPECT_FALSE(detector.Observe(100, 50).refit);  // 2x slower, but one report only
  EXPECT_FALSE(detector.Observe(100, 50).refit);
  DriftVerdict verdict = detector.Observe(100, 50);
  EXPECT_TRUE(verdict.refit);
  EXPECT_NEAR(verdict.drift, -0.5, 1e-12);
}

TEST(DriftDetector, NoiseWithinTheThresholdDoesNotTrigger) {
  DriftDetector detector({.threshold = 0.1, .window = 4});
  for (double measured : {104.0, 97.0, 108.0, 95.0, 103.0, 99.0}) {
    EXPECT_FALSE(detector.Observe(100, measured).refit) << measured;
  }
  EXPECT_LT(std::abs(detector.Current().drift), 0.05);
}

TEST(DriftDetector, SystematicDriftTriggersAndResetForgets) {
  DriftDetector detector({.threshold = 0.1, .window = 4});
  for (int i = 0; i < 4; ++i) detector.Observe(100, 100);
  EXPECT_FALSE(detector.Current().refit);
  // The job now runs 30% faster than predicted: one such report moves the geometric mean of the
  // window to 1.3^(1/4) = +6.8% (below the threshold), two to 1.3^(1/2) = +14% (above).
  EXPECT_FALSE(detector.Observe(100, 130).refit);
  EXPECT_TRUE(detector.Observe(100, 130).refit);
  detector.Observe(100, 130);
  DriftVerdict verdict = detector.Observe(100, 130);  // window now all 1.3
  EXPECT_TRUE(verdict.refit);
  EXPECT_NEAR(verdict.drift, 0.3, 1e-12);
  detector.Reset();
  EXPECT_EQ(detector.size(), 0);
  EXPECT_FALSE(detector.Current().refit);
}

TEST(DriftDetector, GeometricMeanIsSymmetric) {
  DriftDetector detector({.threshold = 0.1, .window = 2});
  detector.Observe(100, 200);
  EXPECT_NEAR(detector.Observe(100, 50).drift, 0.0, 1e-12);  // 2x fast then 2x slow
}

TEST(DriftDetector, IgnoresMeaninglessReports) {
  DriftDetector detector({.threshold = 0.1, .window = 1});
  detector.Observe(0, 10);
  detector.Observe(10, -1);
  detector.Observe(10, std::numeric_limits<double>::infinity());
  EXPECT_EQ(detector.size(), 0);
  EXPECT_TRUE(detector.Observe(10, 20).refit);
}

}  // namespace
}  // namespace elastic::perf
