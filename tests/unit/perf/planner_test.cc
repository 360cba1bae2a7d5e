// GetBestPlan, plan enumeration, the determinism filter and the GPU sensitivity curve.
#include "perf/rubick/planner.h"

#include <gtest/gtest.h>

#include "tests/unit/perf/perf_fixtures.h"

namespace elastic::perf {
namespace {

using testing::OneNode;
using testing::RoundParams;
using testing::SmallModel;

ExecutionPlan Best(const ModelDesc& m, const Resources& r, const PerfParams& k = RoundParams(),
                   const PlanSearchOptions& options = {}) {
  Result<PlanChoice> choice = GetBestPlan(m, r, k, options);
  EXPECT_TRUE(choice) << choice.error;
  return choice ? choice->plan : ExecutionPlan{.dp = 0};
}

Resources WithMemory(Resources r, double gpu_bytes, double host_bytes = 0) {
  r.gpu_mem_bytes = gpu_bytes;
  r.host_mem_bytes = host_bytes;
  return r;
}

TEST(GetBestPlan, PlainDpOnOneGpuWhenEverythingFits) {
  // GA, GC and offload only add time; TP/PP need more GPUs.
  EXPECT_EQ(Describe(Best(SmallModel(), WithMemory(OneNode(1), 80e9))), "dp=1");
}

TEST(GetBestPlan, DpWhenCommunicationIsCheapAndTheOptimizerStepFree) {
  // With k_opt = 0, ZeRO-DP's only advantage (a d-times shorter optimizer step, §4.2) is gone
  // and DP wins the tie as the simpler plan. With a fast, well-overlapped gradient sync, TP/PP
  // lose by their critical-path communication and PP also by its bubble, even where TP is
  // allowed.
  PerfParams k = RoundParams();
  k.k_opt = 0;
  k.k_sync = 8;
  Resources r = WithMemory(OneNode(4), 80e9);
  r.b_intra = 1e12;
  const PlanSearchOptions any{.determinism = Determinism::kStatistical};
  EXPECT_EQ(Describe(Best(SmallModel(), r, k, any)), "dp=4");
  // With a slow sync (k_sync = 1: no overlap; 0.03 s at 1e10 B/s) TP's smaller volume wins.
  k.k_sync = 1;
  r.b_intra = 1e10;
  EXPECT_EQ(Describe(Best(SmallModel(), r, k, any)), "dp=1+tp=4");
  // With a real optimizer cost the paper's model prefers ZeRO-DP on several GPUs (Fig. 3a).
  EXPECT_EQ(Describe(Best(SmallModel(), r)), "dp=4+zero-2");
}

TEST(GetBestPlan, GradientCheckpointingWhenActivationsDoNotFit) {
  // b = 2 on one GPU: DP needs 1.6 GB of states + 0.2 GB of activations, and GA cannot go below
  // one sample (0.1 GB); GC keeps 2 x (4 layer inputs + one layer) = 50.5 MB. ZeRO-Offload would
  // fit too but its transfers cost more than GC's extra forward pass.
  ModelDesc m = SmallModel();
  m.global_batch = 2;
  EXPECT_EQ(Describe(Best(m, WithMemory(OneNode(1), 1.66e9))), "dp=1+gc");
}

TEST(GetBestPlan, ZeroDpWhenModelStatesDoNotFit) {
  // 4 GPUs of 1.2 GB: DP's 1.6 GB of states cannot fit, ZeRO-2's 0.55 GB can.
  EXPECT_EQ(Describe(Best(SmallModel(), WithMemory(OneNode(4), 1.2e9))), "dp=4+zero-2");
}

TEST(GetBestPlan, ZeroOffloadIsTheOnlyPlanOnOneSmallGpu) {
  // Rubick §7.2: with one GPU left, only ZeRO-Offload fits (0.2 GB weights + 0.8 GB activations),
  // using every CPU thread of the allocation.
  ExecutionPlan plan = Best(SmallModel(), WithMemory(OneNode(1), 1.1e9, 4e9));
  EXPECT_EQ(Describe(plan), "dp=1+zero-2+offload,c=16");
  // Not enough host memory for the offloaded states: nothing fits, and the reason says so.
  Result<PlanChoice> none =
      GetBestPlan(SmallModel(), WithMemory(OneNode(1), 1.1e9, 1e9), RoundParams());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error.find("fits memory on 1 GPUs"), std::string::npos) << none.error;
}

TEST(GetBestPlan, ReportsTheChosenPlansTimeAndMemory) {
  Result<PlanChoice> choice =
      GetBestPlan(SmallModel(), WithMemory(OneNode(1), 80e9), RoundParams());
  ASSERT_TRUE(choice);
  EXPECT_DOUBLE_EQ(choice->time.iter, 0.30);
  EXPECT_DOUBLE_EQ(choice->memory.gpu_total, 24e8);
}

// SmallModel on 4 GPUs of 0.56 GB with too little host memory for ZeRO-Offload: every DP-based
// plan needs >= 0.575 GB, so only model parallelism fits. TP is not bitwise-safe (design.md §4).
class ModelParallelOnly : public ::testing::Test {
 protected:
  Resources resources_ = WithMemory(OneNode(4), 5.6e8, 1e9);
};

TEST_F(ModelParallelOnly, StatisticalMayUseTensorParallelism) {
  ExecutionPlan plan =
      Best(SmallModel(), resources_, RoundParams(), {.determinism = Determinism::kStatistical});
  EXPECT_GT(plan.tp, 1) << Describe(plan);
}

TEST_F(ModelParallelOnly, BitwiseLevelsFallBackToPipelineParallelism) {
  for (Determinism level : {Determinism::kD0, Determinism::kD1, Determinism::kD2}) {
    ExecutionPlan plan = Best(SmallModel(), resources_, RoundParams(), {.determinism = level});
    EXPECT_EQ(plan.tp, 1) << Describe(plan);
    EXPECT_GT(plan.pp, 1) << Describe(plan);
  }
}

TEST(EnumeratePlans, DeterminismFilterAdmitsOnlyBitwiseSafePlansBelowStatistical) {
  const Resources r = OneNode(8);
  for (Determinism level :
       {Determinism::kD0, Determinism::kD1, Determinism::kD2, Determinism::kStatistical}) {
    std::vector<ExecutionPlan> plans = EnumeratePlans(SmallModel(), r, {.determinism = level});
    ASSERT_FALSE(plans.empty());
    bool any_tp = false;
    for (const ExecutionPlan& plan : plans) {
      any_tp |= plan.tp > 1;
      EXPECT_EQ(CheckPlan(SmallModel(), r, plan), "") << Describe(plan);
      // One rule with the option vocabulary shared by the plugin and elasticd.
      EXPECT_EQ(AllowedUnder(plan, level), PlanAllowedUnder(Family(plan), level));
    }
    EXPECT_EQ(any_tp, level == Determinism::kStatistical);
  }
}

TEST(EnumeratePlans, CoversThePaperPlanSpace) {
  const Resources r = OneNode(8);
  std::vector<ExecutionPlan> plans =
      EnumeratePlans(SmallModel(), r, {.determinism = Determinism::kStatistical});
  auto has = [&](const ExecutionPlan& p) {
    return std::find(plans.begin(), plans.end(), p) != plans.end();
  };
  EXPECT_TRUE(has({.dp = 8}));
  EXPECT_TRUE(has({.dp = 8, .gc = true}));
  EXPECT_TRUE(has({.dp = 4, .tp = 2, .ga_steps = 2}));
  EXPECT_TRUE(has({.dp = 8, .zero_stage = 2}));
  EXPECT_TRUE(has({.dp = 8, .zero_stage = 2, .offload = true, .cpu_threads = 16}));
  EXPECT_TRUE(has({.dp = 2, .tp = 2, .pp = 2, .micro_batches = 4, .gc = true}));
  EXPECT_FALSE(has({.dp = 8, .zero_stage = 2, .offload = true, .cpu_threads = 8}));  // c < max
  EXPECT_FALSE(has({.dp = 4, .tp = 2, .zero_stage = 2}));  // ZeRO is DP-based
  EXPECT_EQ(plans.front(), (ExecutionPlan{.dp = 8}));      // simplest first
  ModelDesc cnn = SmallModel();
  cnn.seq_len = 0;  // no TP/PP volumes: DP-based plans only
  for (const ExecutionPlan& p :
       EnumeratePlans(cnn, r, {.determinism = Determinism::kStatistical})) {
    EXPECT_EQ(p.tp * p.pp, 1) << Describe(p);
  }
}

TEST(GetBestPlan, FixedFamilyRestrictsTheSearch) {
  const Resources r = WithMemory(OneNode(4), 80e9);
  for (Plan family :
       {Plan::kDp, Plan::kGa, Plan::kGc, Plan::kZeroDp, Plan::kZeroOffload, Plan::kPp}) {
    ExecutionPlan plan = Best(SmallModel(), r, RoundParams(), {.family = family});
    EXPECT_EQ(Family(plan), family) << Describe(plan);
  }
  Result<PlanChoice> tp = GetBestPlan(SmallModel(), r, RoundParams(), {.family = Plan::kTp});
  ASSERT_FALSE(tp);  // TP under the default d1
  EXPECT_NE(tp.error.find("no valid plan for 4 GPUs under determinism d1 and plan tp"),
            std::string::npos)
      << tp.error;
  EXPECT_FALSE(GetBestPlan(SmallModel(), r, RoundParams(), {.family = Plan::kBurst}));
}

TEST(PackedResources, FillsNodesAndSharesCpusAndHostMemory) {
  NodeSpec node = testing::A800Like();
  Resources r = PackedResources(node, 12);
  EXPECT_EQ(r.Nodes(), 2);
  EXPECT_EQ(r.cpus, 144);
  EXPECT_DOUBLE_EQ(r.host_mem_bytes, 2400 * testing::kGB);
  EXPECT_DOUBLE_EQ(r.gpu_mem_bytes, node.gpu_mem_bytes);
}

TEST(GpuSensitivityCurve, FlatAcrossGpuCountsNoPlanCanUse) {
  // A CNN-like model (no TP/PP) with b = 8 can use 1, 2, 4 or 8 GPUs only (whole samples per
  // GPU); in between, the curve keeps the best throughput reachable with fewer GPUs (Fig. 6).
  ModelDesc cnn = SmallModel();
  cnn.seq_len = 0;
  NodeSpec node = testing::A800Like();
  node.gpus_per_node = 4;
  node.cpus_per_node = 16;
  std::vector<CurvePoint> curve = GpuSensitivityCurve(cnn, node, 8, RoundParams());
  ASSERT_EQ(curve.size(), 8u);
  for (int g : {1, 2, 4, 8}) EXPECT_TRUE(curve[g - 1].best) << g;
  for (int g : {3, 5, 6, 7}) EXPECT_FALSE(curve[g - 1].best) << g;
  EXPECT_EQ(curve[2].throughput, curve[1].throughput);
  EXPECT_EQ(curve[2].curve_gpus, 2);
  EXPECT_EQ(curve[6].curve_gpus, 4);
  for (int g = 1; g < 8; ++g) EXPECT_GE(curve[g].throughput, curve[g - 1].throughput);
  EXPECT_GT(curve[3].throughput, curve[1].throughput);  // 4 GPUs beat 2
  EXPECT_EQ(curve[0].best->time.throughput, curve[0].throughput);
}

}  // namespace
}  // namespace elastic::perf
