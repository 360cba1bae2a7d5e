// The probe's quiet time, the pooled slope, the scaling to the quiet host, and the plain and
// scaled estimates over a profile's rounds (agent/profile/host_speed.h, round_estimates.h), on
// hand-made measurements where a slow host phase doubles the probe and slows steps by 2^0.5.
#include "agent/profile/host_speed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "agent/profile/round_estimates.h"

namespace elastic::agent {
namespace {

TEST(HostSpeed, QuietProbeTimeIsTheTenthPercentile) {
  std::vector<Probed> samples;
  for (int i = 20; i >= 1; --i) samples.push_back({1, static_cast<double>(i)});
  EXPECT_DOUBLE_EQ(QuietProbeMs(samples), 2.0);  // nearest rank: 2 of 20 at or below
  EXPECT_DOUBLE_EQ(QuietProbeMs({{5, 3.0}}), 3.0);
  EXPECT_DOUBLE_EQ(QuietProbeMs({{5, 3.0}, {6, 1.0}, {7, 2.0}}), 1.0);
  EXPECT_EQ(Values({{5, 3.0}, {6, 1.0}}), (std::vector<double>{5, 6}));
}

TEST(HostSpeed, SlopeIsFittedWithinEachGroupAndPooled) {
  // Two configurations at different speeds, both slowed by probe^-0.5: pooling them without
  // removing each one's mean would mix speed with slowdown.
  const double slow = std::pow(2.0, -0.5);
  const std::vector<std::vector<Probed>> groups = {
      {{1000, 1.0}, {1000 * slow, 2.0}, {1000, 1.0}},
      {{300, 1.0}, {300 * slow, 2.0}},
  };
  EXPECT_NEAR(ProbeSlope(groups), -0.5, 1e-12);
  // A rate that ignores the probe, and groups without two probe times, give 0.
  EXPECT_NEAR(ProbeSlope({{{50, 1.0}, {50, 3.0}}}), 0.0, 1e-12);
  EXPECT_EQ(ProbeSlope({{{50, 1.0}}, {}}), 0.0);
}

TEST(HostSpeed, AtQuietHostUndoesTheSlowdown) {
  const double slow = std::pow(2.0, -0.5);
  const std::vector<double> scaled = AtQuietHost({{1000, 1.0}, {1000 * slow, 2.0}}, -0.5, 1.0);
  ASSERT_EQ(scaled.size(), 2u);
  EXPECT_DOUBLE_EQ(scaled[0], 1000.0);
  EXPECT_NEAR(scaled[1], 1000.0, 1e-9);
  // Slope 0 (a quiet host): unchanged.
  EXPECT_EQ(AtQuietHost({{7, 3.0}}, 0.0, 1.0), (std::vector<double>{7}));
}

// One run in three rounds: round 1 quiet, round 2 slow (probe 2 ms, rate / sqrt 2), round 3
// half slow; forward passes (seconds per sample) with one slow round.
RoundMeasurements ThreeRounds() {
  const double slow = std::pow(2.0, -0.5);
  RoundMeasurements measured;
  measured.labels = {"w1-t1-dp"};
  measured.threads = {1};
  measured.steps = {{
      {{1000, 1.0}, {1000, 1.0}, {1000, 1.0}},
      {{1000 * slow, 2.0}, {1000 * slow, 2.0}, {1000 * slow, 2.0}},
      {{1000, 1.0}, {1000 * slow, 2.0}, {1000 * slow, 2.0}},
  }};
  measured.forward[1] = {{{0.001, 1.0}}, {{0.002, 2.0}}, {{0.001, 1.0}}};
  return measured;
}

TEST(RoundEstimates, PlainIsTheMedianOfRoundMedians) {
  const Estimates plain = PlainEstimates(ThreeRounds());
  ASSERT_EQ(plain.rate.size(), 1u);
  EXPECT_NEAR(plain.rate[0], 1000 * std::pow(2.0, -0.5), 1e-9);  // the slow phase wins
  EXPECT_DOUBLE_EQ(plain.forward_rate.at(1), 1000.0);
}

TEST(RoundEstimates, ScaledToTheQuietHost) {
  const RoundMeasurements measured = ThreeRounds();
  const HostScaling scaling = FitHostScaling(measured);
  EXPECT_NEAR(scaling.step_slope, -0.5, 1e-12);
  EXPECT_DOUBLE_EQ(scaling.step_quiet_ms.at(1), 1.0);
  EXPECT_NEAR(scaling.forward_slope.at(1), 1.0, 1e-12);  // seconds grow with the probe
  EXPECT_DOUBLE_EQ(scaling.forward_quiet_ms.at(1), 1.0);
  const Estimates quiet = QuietHostEstimates(measured, scaling);
  EXPECT_NEAR(quiet.rate[0], 1000.0, 1e-9);
  EXPECT_NEAR(quiet.forward_rate.at(1), 1000.0, 1e-9);
}

// A pass of 256 samples taking 2 ms + 256 x 10 us and one of 128 taking 2 ms + 128 x 10 us:
// the line through both gives back the fixed 2 ms and the 10 us per sample; noise that would
// make a part negative leaves the pass all per sample.
TEST(RoundEstimates, HalfBatchPassesSplitOffTheFixedCost) {
  const double large = (0.002 + 256 * 1e-5) / 256;
  const double small = (0.002 + 128 * 1e-5) / 128;
  const perf::PassTime split = SplitPassTime(large, 256, small, 128);
  EXPECT_NEAR(split.s_per_pass, 0.002, 1e-15);
  EXPECT_NEAR(split.s_per_sample, 1e-5, 1e-18);
  const perf::PassTime noisy = SplitPassTime(1e-5, 256, 0.9e-5, 128);  // small pass cheaper
  EXPECT_EQ(noisy.s_per_pass, 0.0);
  EXPECT_EQ(noisy.s_per_sample, 1e-5);
  // The H200's 256- and 128-sample passes of fmnist_cnn: 379 and 385 us, all fixed cost.
  const perf::PassTime launch_bound = SplitPassTime(1.48e-6, 256, 3.01e-6, 128);
  EXPECT_NEAR(launch_bound.s_per_sample, 1.48e-8, 1e-20);
  EXPECT_NEAR(launch_bound.s_per_pass, 0.99 * 1.48e-6 * 256, 1e-15);
  EXPECT_NEAR(launch_bound.s_per_pass + 256 * launch_bound.s_per_sample, 1.48e-6 * 256, 1e-15);

  RoundMeasurements measured = ThreeRounds();
  measured.forward[1] = {{{large, 1.0}}, {{large, 1.0}}, {{large, 1.0}}};
  EXPECT_EQ(PlainEstimates(measured).forward_pass_s.at(1), 0.0);  // no half passes: linear
  measured.forward_batch = 256;
  measured.forward_small_batch = 128;
  measured.forward_small[1] = {{{small, 1.0}}, {{small, 1.0}}, {{small, 1.0}}};
  const Estimates plain = PlainEstimates(measured);
  EXPECT_NEAR(plain.forward_pass_s.at(1), 0.002, 1e-15);
  EXPECT_NEAR(plain.forward_rate.at(1), 1e5, 1e-6);
  const Estimates quiet = QuietHostEstimates(measured, FitHostScaling(measured));
  EXPECT_NEAR(quiet.forward_pass_s.at(1), 0.002, 1e-15);
  EXPECT_TRUE(plain.backward.empty());  // no backward passes measured: none estimated

  // Backward passes of 256 and 128 samples: 0.5 ms + 2e-5 s per sample.
  const double backward_large = (0.0005 + 256 * 2e-5) / 256,
               backward_small = (0.0005 + 128 * 2e-5) / 128;
  measured.backward[1] = {
      {{backward_large, 1.0}}, {{backward_large, 1.0}}, {{backward_large, 1.0}}};
  measured.backward_small[1] = {
      {{backward_small, 1.0}}, {{backward_small, 1.0}}, {{backward_small, 1.0}}};
  for (const Estimates& estimates :
       {PlainEstimates(measured), QuietHostEstimates(measured, FitHostScaling(measured))}) {
    ASSERT_EQ(estimates.backward.count(1), 1u);
    EXPECT_NEAR(estimates.backward.at(1).s_per_pass, 0.0005, 1e-15);
    EXPECT_NEAR(estimates.backward.at(1).s_per_sample, 2e-5, 1e-18);
    EXPECT_NEAR(estimates.forward_pass_s.at(1), 0.002, 1e-15);  // the forward split unchanged
  }
}

TEST(RoundEstimates, NoiseLinesShowBothSpreads) {
  const RoundMeasurements measured = ThreeRounds();
  const HostScaling scaling = FitHostScaling(measured);
  std::ostringstream out;
  PrintRoundNoise(measured, &scaling, out);
  const std::string text = out.str();
  // Plain: round medians 1000, 707.1, 707.1 -> 41.4 %; forward rates 1000, 500, 1000 -> 50 %.
  EXPECT_NE(text.find("profile: noise over the 3 rounds, (max - min) / median: runs 41.4 % "
                      "(median), 41.4 % (largest: w1-t1-dp); forward pass 50.0 % (1 thread)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("profile: host probe: step rate ~ probe^-0.500, quiet probe 1.000 ms (1 "
                      "thread); forward time ~ probe^1.000 (1 thread); noise at the quiet host: "
                      "runs 0.0 % (median), 0.0 % (largest: w1-t1-dp); forward pass 0.0 % (1 "
                      "thread)\n"),
            std::string::npos)
      << text;
  std::ostringstream plain_only;
  PrintRoundNoise(measured, nullptr, plain_only);
  EXPECT_EQ(plain_only.str().find("host probe"), std::string::npos) << plain_only.str();
}

}  // namespace
}  // namespace elastic::agent
