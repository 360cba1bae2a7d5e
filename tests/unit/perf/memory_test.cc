// Memory estimator: model states under DP/3D/ZeRO/Offload, activations under GA/GC/PP.
#include "perf/rubick/memory.h"

#include <gtest/gtest.h>

#include "tests/unit/perf/perf_fixtures.h"

namespace elastic::perf {
namespace {

using testing::OneNode;
using testing::SmallModel;

// SmallModel: P = 1e8 (16 bytes each), 1e8 activation bytes per sample over 4 layers, b = 8.
TEST(EstimateMemory, DataParallelKeepsAllStatesAndItsShareOfTheBatch) {
  MemoryEstimate one = EstimateMemory(SmallModel(), {});
  EXPECT_DOUBLE_EQ(one.states, 16e8);
  EXPECT_DOUBLE_EQ(one.activations, 8e8);
  EXPECT_DOUBLE_EQ(one.gpu_total, 24e8);
  EXPECT_DOUBLE_EQ(one.host_total, 0);
  MemoryEstimate four = EstimateMemory(SmallModel(), {.dp = 4});
  EXPECT_DOUBLE_EQ(four.states, 16e8);
  EXPECT_DOUBLE_EQ(four.activations, 2e8);  // 2 samples per GPU
}

TEST(EstimateMemory, GradientAccumulationShrinksTheMicroBatch) {
  EXPECT_DOUBLE_EQ(EstimateMemory(SmallModel(), {.ga_steps = 4}).activations, 2e8);
}

TEST(EstimateMemory, ZeroPartitionsStatesOverDataParallelRanks) {
  // ZeRO-1: 2 + 2 + 12/d bytes per parameter; ZeRO-2: 2 + (2 + 12)/d.
  EXPECT_DOUBLE_EQ(EstimateMemory(SmallModel(), {.dp = 4, .zero_stage = 1}).states, 7e8);
  EXPECT_DOUBLE_EQ(EstimateMemory(SmallModel(), {.dp = 4, .zero_stage = 2}).states, 5.5e8);
}

TEST(EstimateMemory, OffloadKeepsOnlyFp16WeightsOnTheGpu) {
  MemoryEstimate m =
      EstimateMemory(SmallModel(), {.zero_stage = 2, .offload = true, .cpu_threads = 4});
  EXPECT_DOUBLE_EQ(m.states, 2e8);
  EXPECT_DOUBLE_EQ(m.host_total, 14e8);  // fp16 gradients + fp32 master weights and moments
}

TEST(EstimateMemory, CheckpointingKeepsLayerInputsAndOneLayer) {
  // Layer input s*h*2 bytes = 65536 per sample per layer, 4 layers, 8 samples; plus one layer's
  // full activations (1e8 / 4 per sample) while it is recomputed.
  EXPECT_DOUBLE_EQ(EstimateMemory(SmallModel(), {.gc = true}).activations,
                   65536.0 * 4 * 8 + 2.5e7 * 8);
}

TEST(EstimateMemory, ModelParallelism) {
  MemoryEstimate tp = EstimateMemory(SmallModel(), {.tp = 2});
  EXPECT_DOUBLE_EQ(tp.states, 8e8);
  EXPECT_DOUBLE_EQ(tp.activations, 4e8);
  // PP 2 stages, 4 micro-batches of 2 samples, 2 layers per stage, 2 micro-batches in flight.
  MemoryEstimate pp = EstimateMemory(SmallModel(), {.pp = 2, .micro_batches = 4});
  EXPECT_DOUBLE_EQ(pp.states, 8e8);
  EXPECT_DOUBLE_EQ(pp.activations, 2.5e7 * 2 * 2 * 2);
}

TEST(CheckMemory, RefusesPlansThatDoNotFit) {
  Resources r = OneNode(1);
  r.gpu_mem_bytes = 2e9;
  std::string why = CheckMemory(SmallModel(), r, {});
  EXPECT_NE(why.find("plan dp=1: needs 2.24 GiB per GPU"), std::string::npos) << why;
  EXPECT_NE(why.find("the GPUs have 1.86 GiB"), std::string::npos) << why;
  EXPECT_EQ(CheckMemory(SmallModel(), r, {.gc = true}), "");
  const ExecutionPlan offload{.zero_stage = 2, .offload = true, .cpu_threads = 4};
  EXPECT_EQ(CheckMemory(SmallModel(), r, offload), "");
  r.host_mem_bytes = 1e9;
  EXPECT_NE(CheckMemory(SmallModel(), r, offload).find("of host memory"), std::string::npos);
}

TEST(CheckMemory, UnknownLimitsAreNotChecked) {
  EXPECT_EQ(CheckMemory(SmallModel(), OneNode(1), {}), "");
}

}  // namespace
}  // namespace elastic::perf
