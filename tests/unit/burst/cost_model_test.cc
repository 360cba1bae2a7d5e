// comp/sync/comm of DeepPool §4.1: interpolation, extrapolation and the network model.
#include "perf/burst/cost_model.h"

#include <gtest/gtest.h>

#include "tests/unit/burst/burst_test_util.h"

namespace elastic::burst {
namespace {

using testing::MakeLayer;

TEST(ComputeAtBatch, InterpolatesBetweenMeasuredBatches) {
  Layer layer = MakeLayer("l", {{2, 4.0}, {4, 6.0}, {8, 14.0}}, 0, 0);
  EXPECT_DOUBLE_EQ(ComputeAtBatch(layer, 4), 6e-3);   // measured
  EXPECT_DOUBLE_EQ(ComputeAtBatch(layer, 3), 5e-3);   // halfway between 4 ms and 6 ms
  EXPECT_DOUBLE_EQ(ComputeAtBatch(layer, 6), 10e-3);  // halfway between 6 ms and 14 ms
}

TEST(ComputeAtBatch, ClampsBelowAndScalesAboveTheTable) {
  Layer layer = MakeLayer("l", {{2, 4.0}, {4, 6.0}}, 0, 0);
  EXPECT_DOUBLE_EQ(ComputeAtBatch(layer, 1), 4e-3);   // never faster than the smallest batch
  EXPECT_DOUBLE_EQ(ComputeAtBatch(layer, 12), 18e-3); // 6 ms * 12 / 4: largest batch's rate
}

TEST(LayerCompute, SlowestWorkerHoldsTheRoundedUpShare) {
  Layer layer = MakeLayer("l", {{1, 1.0}, {2, 2.0}, {3, 3.0}, {4, 4.0}}, 0, 0);
  EXPECT_DOUBLE_EQ(LayerCompute(layer, 8, 2), 4e-3);  // 4 samples each
  EXPECT_DOUBLE_EQ(LayerCompute(layer, 8, 3), 3e-3);  // 3, 3, 2 samples: ceil(8/3) = 3
  EXPECT_DOUBLE_EQ(LayerCompute(layer, 8, 8), 1e-3);
}

TEST(SyncTime, RingAllReducePlusLatency) {
  NetworkModel net{1e9, 1e-3};
  EXPECT_EQ(SyncTime(net, 4e6, 1), 0.0);
  EXPECT_EQ(SyncTime(net, 0.0, 8), 0.0);
  EXPECT_DOUBLE_EQ(SyncTime(net, 4e6, 2), 4e-3 + 1e-3);    // 2*(1/2)*4 MB = 4 MB
  EXPECT_DOUBLE_EQ(SyncTime(net, 4e6, 4), 6e-3 + 1e-3);    // 2*(3/4)*4 MB = 6 MB
}

TEST(TransitionTime, ReshardsTheSmallerGroupsShareBothWays) {
  NetworkModel net{1e9, 1e-3};
  EXPECT_EQ(TransitionTime(net, 4e6, 2, 2), 0.0);
  // 1 -> 4 GPUs: the one GPU keeps 1/4 and sends 3/4 of 4 MB = 3 ms, + 1 ms latency, x2.
  EXPECT_DOUBLE_EQ(TransitionTime(net, 4e6, 1, 4), 8e-3);
  EXPECT_DOUBLE_EQ(TransitionTime(net, 4e6, 4, 1), 8e-3);
  // 2 -> 4: each of the two sends 1/2 - 1/4 of the batch = 1 MB: (1 + 1) x 2.
  EXPECT_DOUBLE_EQ(TransitionTime(net, 4e6, 2, 4), 4e-3);
}

TEST(SeparateTransitionTime, MovesWholeShares) {
  NetworkModel net{1e9, 0.0};
  EXPECT_DOUBLE_EQ(SeparateTransitionTime(net, 4e6, 2, 2), 4e-3);  // 2 MB each way
  EXPECT_DOUBLE_EQ(SeparateTransitionTime(net, 4e6, 1, 4), 8e-3);  // the one GPU sends 4 MB
}

}  // namespace
}  // namespace elastic::burst
