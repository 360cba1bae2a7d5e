// Tests for the agent's per-rank memory estimate (term by term, per plan) and for the plan choice
// under a memory budget: plans over it are ruled out, the plan changes with the node count, and
// node counts where nothing fits give the sensitivity curve no gain.
#include "perf/rubick/agent_memory.h"

#include <gtest/gtest.h>

#include "perf/rubick/default_perf_model.h"
#include "perf/rubick/plan_selection.h"
#include "tests/unit/supervisor/node_allocations.h"

namespace elastic::agent {
namespace {

// P = 1,000 fp32 parameters in 4 layers, 100 activation bytes per sample, 10 checkpoint bytes
// per sample and layer: every term below is a small whole number of bytes.
perf::ModelDesc Small() {
  perf::ModelDesc m;
  m.params = 1000;
  m.layers = 4;
  m.activation_bytes_per_sample = 100;
  m.gc_checkpoint_bytes_per_sample_layer = 10;
  m.weight_bytes = m.grad_bytes = m.optimizer_bytes = 4;
  return m;
}

PlanRequest Request(std::int64_t ests = 8, std::int64_t batch = 64,
                    Determinism level = Determinism::kD1) {
  PlanRequest r;
  r.ests = ests;
  r.global_batch = batch;  // 8 samples per EST
  r.determinism = level;
  r.model_blocks = 4;
  return r;
}

TEST(AgentMemory, OneRankFoldsAsItGoes) {
  // dp on one rank: parameters, gradients, momentum and one EST's activations; no slots.
  const AgentMemoryEstimate dp = EstimateAgentMemory(Small(), Request(), Plan::kDp, 1);
  EXPECT_EQ(dp.weights, 4000);
  EXPECT_EQ(dp.gradients, 4000);
  EXPECT_EQ(dp.optimizer, 4000);
  EXPECT_EQ(dp.est_slots, 0);
  EXPECT_EQ(dp.activations, 800);
  EXPECT_EQ(dp.exchange, 0);
  EXPECT_EQ(dp.device_total, 12'800);
  // gc: every block's input (10 x 4 x 8) and one block rebuilt (100 / 4 x 8).
  EXPECT_EQ(EstimateAgentMemory(Small(), Request(), Plan::kGc, 1).activations, 320 + 200);
  // zero-offload: the momentum lives with the host threads, with the shard's copies.
  const AgentMemoryEstimate off = EstimateAgentMemory(Small(), Request(), Plan::kZeroOffload, 1);
  EXPECT_EQ(off.optimizer, 0);
  EXPECT_EQ(off.host, 12'000);
  EXPECT_EQ(off.device_total, 8'800);
}

TEST(AgentMemory, SeveralRanksKeepEveryEstsSlot) {
  // d1 on 2 ranks: all 8 slots on every rank; the exchange (send copy of 4 hosted slots, 8
  // chunks of half, the folded half, the gathered whole = 9.5 P) outweighs the activations.
  const AgentMemoryEstimate dp = EstimateAgentMemory(Small(), Request(), Plan::kDp, 2);
  EXPECT_EQ(dp.est_slots, 32'000);
  EXPECT_EQ(dp.exchange, 38'000);
  EXPECT_EQ(dp.device_total, 12'000 + 32'000 + 38'000);
  // zero-dp: the owner's momentum only; its exchange peaks at the send copy + 8 pieces.
  const AgentMemoryEstimate zero = EstimateAgentMemory(Small(), Request(), Plan::kZeroDp, 2);
  EXPECT_EQ(zero.optimizer, 2000);
  EXPECT_EQ(zero.exchange, 32'000);
  EXPECT_EQ(zero.device_total, 8000 + 2000 + 32'000 + 32'000);
  // pp: the running fold (no slots), the stage's momentum, 2 micro-batches of half the layers
  // in flight, then the stage's parameters and the gathered whole.
  const AgentMemoryEstimate pp = EstimateAgentMemory(Small(), Request(), Plan::kPp, 2);
  EXPECT_EQ(pp.est_slots, 0);
  EXPECT_EQ(pp.optimizer, 2000);
  EXPECT_EQ(pp.activations, 800);
  EXPECT_EQ(pp.exchange, 6000);
  EXPECT_EQ(pp.device_total, 10'000 + 6000);
  // tp keeps whole parameters, gradients and momentum (docs/plans.md): only activations split.
  const AgentMemoryEstimate tp = EstimateAgentMemory(Small(), Request(), Plan::kTp, 2);
  EXPECT_EQ(tp.weights + tp.gradients + tp.optimizer, 12'000);
  EXPECT_EQ(tp.activations, 400);
  EXPECT_EQ(tp.device_total, 12'000 + 4000);
  // d0: each rank's running partial and the W partials gathered; no slots.
  const AgentMemoryEstimate d0 =
      EstimateAgentMemory(Small(), Request(8, 64, Determinism::kD0), Plan::kDp, 2);
  EXPECT_EQ(d0.est_slots, 0);
  EXPECT_EQ(d0.device_total, 12'000 + 12'000);
}

TEST(AgentMemory, MomentumZeroKeepsNoBuffer) {
  PlanRequest r = Request();
  r.momentum_buffers = false;
  EXPECT_EQ(EstimateAgentMemory(Small(), r, Plan::kDp, 1).optimizer, 0);
  EXPECT_EQ(EstimateAgentMemory(Small(), r, Plan::kZeroOffload, 2).host, 4000);
}

TEST(AgentMemory, TheBudgetIsTheConfiguredOneElseTheNodeShare) {
  NodeAllocation node;
  node.workers_per_node = 2;
  node.mem_bytes_per_node = 8e9;
  PlanRequest r = Request();
  EXPECT_EQ(RankDeviceBudget(r, node), 4e9);
  r.device_memory_bytes = 12'000;
  EXPECT_EQ(RankDeviceBudget(r, node), 12'000);
  const AgentMemoryEstimate dp = EstimateAgentMemory(Small(), r, Plan::kDp, 1);
  const std::string why = AgentMemoryRefusal(dp, r, node);
  EXPECT_NE(why.find("needs 12.50 KiB per rank"), std::string::npos) << why;
  EXPECT_NE(why.find("train.device_memory"), std::string::npos) << why;
  r.device_memory_bytes = 12'800;
  EXPECT_EQ(AgentMemoryRefusal(dp, r, node), "");
  r.device_memory_bytes = 0;
  EXPECT_EQ(AgentMemoryRefusal(dp, r, NodeAllocation{}), "");  // nothing known: not checked
}

// fmnist_cnn's built-in model, E = 8, b = 256, on 1..4 one-rank nodes.
perf::FittedModel Cnn() { return *BuiltInPerfModel("fmnist_cnn"); }

PlanRequest CnnRequest(double budget) {
  PlanRequest r = Request(8, 256);
  r.device_memory_bytes = budget;
  return r;
}

NodeAllocation Nodes(int n) { return OneRankNodes(n, 2); }

double Bytes(Plan word, int ranks) {
  return EstimateAgentMemory(Cnn().model, CnnRequest(0), word, ranks).device_total;
}

TEST(AgentMemorySelection, ABudgetBelowOneNodesDpSwitchesPlansWithTheNodeCount) {
  // Just below dp's replica on one node: one node runs a leaner plan, and more nodes (whose
  // EST slots rule out every slot-folding plan) run pp; shrinking back returns to the first.
  const double budget = Bytes(Plan::kDp, 1) - 1;
  ASSERT_LT(Bytes(Plan::kPp, 2), budget);
  std::vector<Plan> words;
  for (int n = 1; n <= 4; ++n) {
    auto s = SelectPlan(Cnn(), CnnRequest(budget), Nodes(n));
    ASSERT_TRUE(s) << s.error;
    EXPECT_FALSE(s->over_budget) << n << ": " << s->reason;
    EXPECT_LE(Bytes(s->word, n), budget) << n << ": " << s->reason;
    EXPECT_NE(s->reason.find("over the memory budget"), std::string::npos) << s->reason;
    EXPECT_NE(s->reason.find("dp "), std::string::npos) << s->reason;
    words.push_back(s->word);
  }
  EXPECT_NE(words[0], Plan::kDp);
  EXPECT_EQ(words[0], Plan::kZeroOffload);  // gc fits too, but recomputes: slower
  for (int n = 2; n <= 4; ++n) EXPECT_EQ(words[n - 1], Plan::kPp) << n;
  // Without a budget the same job runs dp everywhere (the built-in model's gains are small).
  for (int n = 1; n <= 4; ++n) EXPECT_EQ(SelectPlan(Cnn(), CnnRequest(0), Nodes(n))->word, Plan::kDp);
}

TEST(AgentMemorySelection, WhereNothingFitsTheLeanestRunsAndTheCurveGainsNothing) {
  // Just above gc on one rank: 1 node fits (gc only); on 2 and 3 nodes nothing fits.
  const double budget = Bytes(Plan::kGc, 1) + 1;
  ASSERT_LT(budget, Bytes(Plan::kPp, 2));
  auto two = SelectPlan(Cnn(), CnnRequest(budget), Nodes(2));
  ASSERT_TRUE(two) << two.error;
  EXPECT_TRUE(two->over_budget);
  EXPECT_EQ(two->word, Plan::kPp);  // the smallest estimate on 2 ranks
  EXPECT_NE(two->reason.find("no plan fits the memory budget"), std::string::npos) << two->reason;
  const std::vector<NodeCurvePoint> curve =
      NodeSensitivityCurve(Cnn(), CnnRequest(budget), Nodes(1), 3);
  ASSERT_EQ(curve.size(), 3u);
  ASSERT_TRUE(curve[0].best.has_value());
  EXPECT_EQ(curve[0].best->word, Plan::kGc);
  for (int i = 1; i < 3; ++i) {
    EXPECT_FALSE(curve[i].best.has_value()) << i + 1;
    EXPECT_EQ(curve[i].samples_per_s, curve[0].samples_per_s) << i + 1;  // no gain
    EXPECT_EQ(curve[i].curve_nodes, 1);
  }
  // A fixed plan that does not fit is refused with the estimate, as before.
  PlanRequest fixed = CnnRequest(budget);
  fixed.requested = Plan::kDp;
  auto refused = SelectPlan(Cnn(), fixed, Nodes(1));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error.find("does not fit memory (estimated): needs"), std::string::npos)
      << refused.error;
}

}  // namespace
}  // namespace elastic::agent
