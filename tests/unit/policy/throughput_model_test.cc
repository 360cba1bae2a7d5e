// Tests for the throughput model: EasyScale Eq. 1 and the communication term.
#include "scheduler/model/throughput_model.h"

#include <gtest/gtest.h>

#include <vector>

namespace elastic::model {
namespace {

TEST(EasyScaleComputeRate, HomogeneousHasEstQuantumWaste) {
  // maxP = 4: k GPUs run ceil(4 / k) ESTs each, so 3 GPUs are no faster than 2.
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{1.0, 1}}, 1}, 4), 1.0);
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{1.0, 2}}, 1}, 4), 2.0);
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{1.0, 3}}, 1}, 4), 2.0);
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{1.0, 4}}, 1}, 4), 4.0);
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{1.0, 6}}, 1}, 4), 4.0);  // surplus devices idle
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({}, 4), 0.0);
}

TEST(EasyScaleComputeRate, HeterogeneousMatchesEquation1ByHand) {
  // One C=1 and one C=0.5 device. maxP 3: A = (2, 1), f = 2, waste 0 -> 3 / 2 = 1.5.
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{1.0, 1}, {0.5, 1}}, 2}, 3), 1.5);
  // maxP 4: A = (3, 1), f = 3; waste = (1 - 3/3) + (0.5 - 1/3) = 1/6 -> 1.5 - 1/6 = 4/3.
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{1.0, 1}, {0.5, 1}}, 2}, 4), 4.0 / 3.0);
  // A faster device counts double: two a100-like (C=2) with maxP 4 -> 4.
  EXPECT_DOUBLE_EQ(EasyScaleComputeRate({{{2.0, 2}}, 1}, 4), 4.0);
}

// One device type takes a closed form, ceil(E/N) / C (OneGroupOverloadFactor); a second group
// with no devices adds nothing to the shape but sends it down the general search, so the two
// must agree bit for bit on every capability the policies produce (device types, and CPU-fed
// capabilities cpus / cpu_need), device count and EST count.
TEST(EasyScaleComputeRate, OneGroupClosedFormEqualsGeneralSearch) {
  std::vector<double> capabilities = {1.0, 0.6, 0.5, 2.0, 3.0, 3.3};
  for (int cpus = 1; cpus <= 16; ++cpus) {
    for (double need : {1.0, 1.5, 3.0, 7.0, 11.7, 12.0}) capabilities.push_back(cpus / need);
  }
  for (double c : capabilities) {
    for (int devices = 1; devices <= 70; ++devices) {
      for (int ests : {0, 1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 64, 100, 256}) {
        const Shape one{{{c, devices}}, 1};
        const Shape general{{{c, devices}, {c, 0}}, 1};
        const EstPlan fast = PlanEsts(one, ests);
        const EstPlan slow = PlanEsts(general, ests);
        ASSERT_EQ(fast.f_overload, slow.f_overload) << c << " x " << devices << ", " << ests;
        ASSERT_EQ(fast.compute_rate, slow.compute_rate) << c << " x " << devices << ", " << ests;
        ASSERT_EQ(fast.ests_per_device.front(), slow.ests_per_device.front());
      }
    }
  }
}

// EasyScaleComputeRate skips building PlanEsts' per-group plan (the policies' hot path): the
// two must agree exactly, also on mixed types, surplus devices and empty shapes.
TEST(EasyScaleComputeRate, EqualsPlanEstsRateExactly) {
  const std::vector<Shape> shapes = {
      {}, {{{1.0, 0}}, 0}, {{{1.0, 1}}, 1}, {{{1.0, 3}}, 3}, {{{0.6, 5}}, 2},
      {{{2.0, 2}, {1.0, 3}}, 3}, {{{3.3, 1}, {0.5, 7}, {1.0, 2}}, 4}, {{{1.0, 40}}, 5}};
  for (const Shape& shape : shapes) {
    for (int ests : {0, 1, 2, 3, 7, 8, 16, 33, 64}) {
      EXPECT_EQ(EasyScaleComputeRate(shape, ests), PlanEsts(shape, ests).compute_rate)
          << shape.groups.size() << " groups, " << ests << " ESTs";
    }
  }
}

TEST(Speedup, CommunicationGivesDiminishingReturnsAndInterNodeCost) {
  JobProfile profile{8, 0.02};
  double one = Speedup(profile, {{{1.0, 1}}, 1});
  double four = Speedup(profile, {{{1.0, 4}}, 1});
  double eight = Speedup(profile, {{{1.0, 8}}, 1});
  double eight_spread = Speedup(profile, {{{1.0, 8}}, 2});
  EXPECT_DOUBLE_EQ(one, 1.0);
  EXPECT_NEAR(eight, 1.0 / (1.0 / 8 + 0.02 * 2 * 7 / 8), 1e-12);
  EXPECT_LT(eight - four, 4 * (four - one) / 3);  // concave
  EXPECT_LT(eight_spread, eight);
  EXPECT_DOUBLE_EQ(CompactSpeedup(profile, 8, 4), eight_spread);
}

// memory_need 1.5: half states, half activations (see PlanMemory). On 1 device nothing fits
// (ZeRO+GC: 0.75 + 0.375); on 2 only ZeRO+GC (0.375 + 0.375); on 4 ZeRO-DP alone fits
// (0.1875 + 0.75) and, without GC's recomputation, is faster.
TEST(Plans, BestPlanFollowsTheAllocation) {
  JobProfile profile{8, 0.02, 1.5};
  EXPECT_EQ(BestPlan(profile, {{{1.0, 1}}, 1}), Plan::kAuto);
  EXPECT_EQ(Speedup(profile, {{{1.0, 1}}, 1}), 0.0);
  EXPECT_EQ(BestPlan(profile, {{{1.0, 2}}, 1}), Plan::kZeroGc);
  EXPECT_EQ(BestPlan(profile, {{{1.0, 4}}, 1}), Plan::kZeroDp);
  double zero_gc = 1.0 / (4.0 / 3.0 / 4 + 0.02 * 1.5 * 2 * 3 / 4);
  double zero = 1.0 / (1.0 / 4 + 0.02 * 1.5 * 2 * 3 / 4);
  JobProfile fixed = profile;
  fixed.plan = Plan::kZeroGc;
  EXPECT_NEAR(Speedup(fixed, {{{1.0, 4}}, 1}), zero_gc, 1e-12);
  EXPECT_NEAR(Speedup(profile, {{{1.0, 4}}, 1}), zero, 1e-12);
  fixed.plan = Plan::kDp;  // plain DP never fits 1.5 device memories
  EXPECT_EQ(Speedup(fixed, {{{1.0, 8}}, 1}), 0.0);
  // No memory need: plain DP, exactly the model without plans.
  EXPECT_DOUBLE_EQ(Speedup({8, 0.02}, {{{1.0, 4}}, 1}), 1.0 / (1.0 / 4 + 0.02 * 2 * 3 / 4));
}

TEST(DeviceCapability, KnownTypesAndUnknown) {
  EXPECT_EQ(DeviceCapability("v100"), 1.0);
  EXPECT_EQ(DeviceCapability("a100"), 2.0);
  EXPECT_FALSE(DeviceCapability("tpu"));
  EXPECT_DOUBLE_EQ(ResizeCost{}.Seconds(), 30.0);
}

}  // namespace
}  // namespace elastic::model
