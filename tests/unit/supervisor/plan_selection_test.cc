// Tests for the per-generation plan choice: determinism filter, fixed plans kept or refused,
// the plan changing with the node count, the environment handed to the step, and the node
// sensitivity curve.
#include "perf/rubick/plan_selection.h"

#include <gtest/gtest.h>

#include "perf/rubick/default_perf_model.h"
#include "tests/unit/supervisor/node_allocations.h"

namespace elastic::agent {
namespace {

// A fitted model shaped like the built-in fmnist_cnn one (a CNN: no TP/PP in the model).
perf::FittedModel Cnn() {
  std::optional<perf::FittedModel> m = BuiltInPerfModel("fmnist_cnn");
  EXPECT_TRUE(m.has_value());
  return *m;
}

// An optimizer-heavy model: 10^8 parameters whose update costs 10 ns each on one rank (and
// 1 us x thread on the host, so offloading does not pay), over a fast network, so sharding the
// update (zero-dp, T_opt / d) pays from 2 ranks on.
perf::FittedModel OptimizerHeavy() {
  perf::FittedModel m = Cnn();
  m.model_name = "heavy";
  m.model.params = 1e8;
  m.params.k_opt = 1e-8;
  m.params.k_opt_off = 1e-6;
  m.b_inter = 1e12;
  m.b_intra = 1e12;
  return m;
}

// A transformer-like model with huge parameters and tiny activations on a slow network: one TP
// group (small V_tp) beats every DP-based plan (large V_dp) when TP is allowed.
perf::FittedModel TpFriendly() {
  perf::FittedModel m = Cnn();
  m.model_name = "tp-friendly";
  m.model.params = 1e9;
  m.model.layers = 4;
  m.model.seq_len = 1;
  m.model.hidden = 8;
  m.params.k_sync = 1.0;  // no overlap: the gradient sync is all on the critical path
  return m;
}

PlanRequest Request(Plan plan = Plan::kAuto, Determinism level = Determinism::kD1) {
  PlanRequest r;
  r.requested = plan;
  r.determinism = level;
  r.ests = 8;
  r.global_batch = 256;
  r.cpu_threads = 1;
  r.model_blocks = 4;
  r.tp_heads = 4;  // as gpt (a real fmnist_cnn job has none: the agent refuses tp on it)
  return r;
}

NodeAllocation Nodes(int n, int cpus = 4) { return OneRankNodes(n, cpus); }

TEST(PlanSelection, AutoOnTheBuiltInModelKeepsDp) {
  // The default model's gains of gc/zero-dp over dp are far below min_gain: dp stays.
  for (int n = 1; n <= 8; ++n) {
    auto s = SelectPlan(Cnn(), Request(), Nodes(n));
    ASSERT_TRUE(s) << s.error;
    EXPECT_EQ(s->word, Plan::kDp) << n << " nodes: " << s->reason;
    EXPECT_GT(s->predicted_samples_per_s, 0.0);
    EXPECT_NE(s->reason.find("auto"), std::string::npos);
  }
}

TEST(PlanSelection, MoreNodesChangeThePlan) {
  auto one = SelectPlan(OptimizerHeavy(), Request(), Nodes(1));
  auto three = SelectPlan(OptimizerHeavy(), Request(), Nodes(3));
  ASSERT_TRUE(one && three) << one.error << three.error;
  EXPECT_EQ(one->word, Plan::kDp) << one->reason;  // one rank: nothing to shard
  EXPECT_EQ(three->word, Plan::kZeroDp) << three->reason;
  EXPECT_EQ(three->plan, AgentExecutionPlan(Plan::kZeroDp, 3, 8, 1));
  EXPECT_EQ(three->plan.ga_steps, 3);  // ceil(8 / 3): the busiest rank's ESTs
  EXPECT_GT(three->predicted_samples_per_s, one->predicted_samples_per_s);
}

TEST(PlanSelection, DeterministicLevelsNeverGetTp) {
  for (Determinism level : {Determinism::kD0, Determinism::kD1, Determinism::kD2}) {
    for (int n = 1; n <= 8; ++n) {
      auto s = SelectPlan(TpFriendly(), Request(Plan::kAuto, level), Nodes(n));
      ASSERT_TRUE(s) << s.error;
      EXPECT_NE(s->word, Plan::kTp) << n;
      EXPECT_TRUE(perf::BitwiseSafe(s->plan)) << n;
    }
  }
  // The same model under statistical takes TP: the filter, not the model, kept it out.
  auto s = SelectPlan(TpFriendly(), Request(Plan::kAuto, Determinism::kStatistical), Nodes(4));
  ASSERT_TRUE(s) << s.error;
  EXPECT_EQ(s->word, Plan::kTp) << s->reason;
  EXPECT_EQ(s->plan.tp, 4);
}

TEST(PlanSelection, PredictsTheGradientExchangeOfTheDeterminismLevel) {
  EXPECT_EQ(GradientExchangeUnder(Determinism::kD0), perf::GradientExchange::kRankPartials);
  for (Determinism level : {Determinism::kD1, Determinism::kD2, Determinism::kStatistical}) {
    EXPECT_EQ(GradientExchangeUnder(level), perf::GradientExchange::kEstSlots);
  }
  // Gradient sync on the critical path (TpFriendly: 1e9 parameters, k_sync = 1, slow network):
  // on 2 ranks of 4 ESTs each, d1 gathers 4 EST gradients where d0 gathers one partial sum, so
  // the same dp plan is predicted slower; on one rank there is no exchange and they agree.
  auto d0 = SelectPlan(TpFriendly(), Request(Plan::kDp, Determinism::kD0), Nodes(2));
  auto d1 = SelectPlan(TpFriendly(), Request(Plan::kDp, Determinism::kD1), Nodes(2));
  ASSERT_TRUE(d0 && d1) << d0.error << d1.error;
  EXPECT_EQ(d0->plan, d1->plan);
  EXPECT_LT(d1->predicted_samples_per_s, 0.5 * d0->predicted_samples_per_s);
  auto one_d0 = SelectPlan(TpFriendly(), Request(Plan::kDp, Determinism::kD0), Nodes(1));
  auto one_d1 = SelectPlan(TpFriendly(), Request(Plan::kDp, Determinism::kD1), Nodes(1));
  ASSERT_TRUE(one_d0 && one_d1) << one_d0.error << one_d1.error;
  EXPECT_DOUBLE_EQ(one_d0->predicted_samples_per_s, one_d1->predicted_samples_per_s);
}

TEST(PlanSelection, D0OnSeveralRanksNeverGetsZero) {
  for (int n = 2; n <= 8; ++n) {
    auto s = SelectPlan(OptimizerHeavy(), Request(Plan::kAuto, Determinism::kD0), Nodes(n));
    ASSERT_TRUE(s) << s.error;
    EXPECT_NE(s->word, Plan::kZeroDp) << n;
    EXPECT_NE(s->word, Plan::kZeroOffload) << n;
  }
}

TEST(PlanSelection, AFixedPlanIsKept) {
  for (Plan plan : {Plan::kDp, Plan::kGa, Plan::kGc, Plan::kZeroDp, Plan::kZeroOffload}) {
    for (int n = 1; n <= 4; ++n) {
      auto s = SelectPlan(OptimizerHeavy(), Request(plan), Nodes(n));
      ASSERT_TRUE(s) << ToString(plan) << " on " << n << ": " << s.error;
      EXPECT_EQ(s->word, plan);
      EXPECT_FALSE(s->cpu_threads.has_value());  // the job's own train.cpu_threads
      EXPECT_NE(s->reason.find("fixed"), std::string::npos);
    }
  }
  // pp on 3 stages of the CNN's 4 blocks: the agent runs it, the model (p | l) cannot predict
  // it: kept, without a prediction.
  auto pp = SelectPlan(Cnn(), Request(Plan::kPp), Nodes(3));
  ASSERT_TRUE(pp) << pp.error;
  EXPECT_EQ(pp->word, Plan::kPp);
  EXPECT_EQ(pp->predicted_samples_per_s, 0.0);
  EXPECT_NE(pp->reason.find("cannot predict"), std::string::npos) << pp->reason;
}

// A user's TorchScript module runs whole on every rank: the model that took tp above never
// gets tp, pp or gc for it, and a fixed pp is refused saying why.
TEST(PlanSelection, AWholeModuleNeverGetsPlansThatSplitIt) {
  PlanRequest request = Request(Plan::kAuto, Determinism::kStatistical);
  request.whole_module = true;
  for (int n = 1; n <= 8; ++n) {
    for (const perf::FittedModel& model : {TpFriendly(), OptimizerHeavy(), Cnn()}) {
      auto s = SelectPlan(model, request, Nodes(n));
      ASSERT_TRUE(s) << s.error;
      EXPECT_EQ(s->plan.tp, 1) << n;
      EXPECT_EQ(s->plan.pp, 1) << n;
      EXPECT_FALSE(s->plan.gc) << n;
    }
  }
  request.requested = Plan::kPp;
  auto pp = SelectPlan(Cnn(), request, Nodes(2));
  ASSERT_FALSE(pp);
  EXPECT_NE(pp.error.find("a TorchScript module (model.torchscript) runs whole on every rank"),
            std::string::npos)
      << pp.error;
}

TEST(PlanSelection, AnInfeasibleFixedPlanIsRefusedSayingWhy) {
  auto pp = SelectPlan(Cnn(), Request(Plan::kPp), Nodes(5));
  ASSERT_FALSE(pp);
  EXPECT_NE(pp.error.find("4 blocks"), std::string::npos) << pp.error;
  auto tp = SelectPlan(TpFriendly(), Request(Plan::kTp, Determinism::kD1), Nodes(2));
  ASSERT_FALSE(tp);
  EXPECT_NE(tp.error.find("not allowed under determinism \"d1\""), std::string::npos) << tp.error;
  auto heads = SelectPlan(TpFriendly(), Request(Plan::kTp, Determinism::kStatistical), Nodes(3));
  ASSERT_FALSE(heads);
  EXPECT_NE(heads.error.find("4 attention heads"), std::string::npos) << heads.error;
  PlanRequest cnn = Request(Plan::kTp, Determinism::kStatistical);
  cnn.tp_heads = 0;
  auto no_tp = SelectPlan(Cnn(), cnn, Nodes(2));
  ASSERT_FALSE(no_tp);
  EXPECT_NE(no_tp.error.find("tp needs a transformer model"), std::string::npos) << no_tp.error;
  auto zero = SelectPlan(Cnn(), Request(Plan::kZeroDp, Determinism::kD0), Nodes(2));
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error.find("d0"), std::string::npos) << zero.error;
  auto ranks = SelectPlan(Cnn(), Request(Plan::kDp), Nodes(9));  // 9 ranks, 8 ESTs
  ASSERT_FALSE(ranks);
  EXPECT_NE(ranks.error.find("8 ESTs"), std::string::npos) << ranks.error;
  NodeAllocation tiny = Nodes(1);
  tiny.mem_bytes_per_node = 1e5;  // 100 kB: not even fmnist_cnn's weights and batch fit
  auto memory = SelectPlan(Cnn(), Request(Plan::kDp), tiny);
  ASSERT_FALSE(memory);
  EXPECT_NE(memory.error.find("fixed plan \"dp\" on 1 rank(s) does not fit memory"),
            std::string::npos)
      << memory.error;
  // auto with nothing that fits runs the leanest plan and says so (agent_memory_test.cc).
  auto leanest = SelectPlan(Cnn(), Request(), tiny);
  ASSERT_TRUE(leanest) << leanest.error;
  EXPECT_TRUE(leanest->over_budget);
}

TEST(PlanSelection, ZeroOffloadChosenByThePlannerCarriesItsThreads) {
  perf::FittedModel m = OptimizerHeavy();
  m.params.k_opt_off = 1e-10;  // the host update is cheap
  m.params.k_opt = 1e-7;       // and the device's expensive
  auto s = SelectPlan(m, Request(), Nodes(2, /*cpus=*/6));
  ASSERT_TRUE(s) << s.error;
  ASSERT_EQ(s->word, Plan::kZeroOffload) << s->reason;
  ASSERT_TRUE(s->cpu_threads.has_value());
  EXPECT_EQ(*s->cpu_threads, 6);  // every CPU of a node's one rank
  EXPECT_EQ(s->plan.cpu_threads, 6);
  auto env = PlanEnvironment(*s);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0], (std::pair<std::string, std::string>{"SLURM_ELASTIC_PLAN", "zero-offload"}));
  EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"SLURM_ELASTIC_PLAN_ARGS", "c=6"}));
}

TEST(PlanSelection, EnvironmentClearsArgumentsOfAnEarlierGeneration) {
  auto s = SelectPlan(Cnn(), Request(), Nodes(2));
  ASSERT_TRUE(s) << s.error;
  auto env = PlanEnvironment(*s);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0].second, "dp");
  EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"SLURM_ELASTIC_PLAN_ARGS", ""}));
}

TEST(PlanSelection, UnevenEstPlacementIsPredictedAtTheBusiestRank) {
  // 8 ESTs on 3 ranks host 3, 3, 2: the step takes as long as on 3 ranks of 3 ESTs, more than
  // on 4 ranks of 2, so a compute-bound job gains little from 3 nodes over 2 (4 ESTs each ->
  // 3) and a lot from 4.
  perf::FittedModel m = Cnn();
  m.b_inter = m.b_intra = 1e15;  // compute-bound
  auto rate = [&](int n) { return SelectPlan(m, Request(), Nodes(n))->predicted_samples_per_s; };
  EXPECT_NEAR(rate(3) / rate(1), 8.0 / 3.0, 0.01);
  EXPECT_NEAR(rate(4) / rate(1), 4.0, 0.01);
}

TEST(PlanSelection, NodeSensitivityCurveIsMonotoneAndNamesTheBestPlan) {
  auto curve = NodeSensitivityCurve(OptimizerHeavy(), Request(), Nodes(1), 10);
  ASSERT_EQ(curve.size(), 10u);
  double previous = 0.0;
  for (const NodeCurvePoint& p : curve) {
    EXPECT_GE(p.samples_per_s, previous) << p.nodes;
    previous = p.samples_per_s;
    if (p.nodes <= 8) {
      ASSERT_TRUE(p.best.has_value()) << p.nodes << ": " << p.why_not;
      EXPECT_EQ(p.best->word, p.nodes == 1 ? Plan::kDp : Plan::kZeroDp) << p.nodes;
    } else {
      EXPECT_FALSE(p.best.has_value());  // more ranks than ESTs
      EXPECT_NE(p.why_not.find("8 ESTs"), std::string::npos) << p.why_not;
      EXPECT_EQ(p.curve_nodes, curve[7].curve_nodes);  // flat past the last usable count
    }
  }
  EXPECT_EQ(curve.back().curve_nodes, 8);  // the optimizer-heavy job scales to all 8 ESTs
}

// The fixed costs per pass that fitted.json states reach the resources every prediction uses: a
// model fitted with them predicts more micro-batches as slower.
TEST(PlanSelection, AgentResourcesCarryTheFittedFixedCostsPerPass) {
  perf::FittedModel m = Cnn();
  m.model.global_batch = 64;  // a multiple of the 8 micro-batches
  const perf::ExecutionPlan plan = AgentExecutionPlan(Plan::kDp, 1, 8, 1);
  EXPECT_EQ(AgentResources(m, Nodes(1), plan).fwd_s_per_pass, 0.0);
  EXPECT_FALSE(AgentResources(m, Nodes(1), plan).backward.has_value());
  const auto before =
      perf::PredictIteration(m.model, AgentResources(m, Nodes(1), plan), plan, m.params);
  ASSERT_TRUE(before) << before.error;
  const double linear = before->iter;
  m.fwd_s_per_pass = 2e-4;
  // The backward pass measured: k_bwd (2) times its time, instead of k_bwd x T_fwd.
  m.backward = perf::PassTime{.s_per_pass = 5e-4, .s_per_sample = m.model.fwd_s_per_sample};
  const perf::Resources r = AgentResources(m, Nodes(1), plan);
  EXPECT_EQ(r.fwd_s_per_pass, 2e-4);
  ASSERT_TRUE(r.backward.has_value());
  EXPECT_EQ(r.backward->s_per_pass, 5e-4);
  // a = 8 micro-batches on one rank: 8 forward and 8 (doubled) backward fixed costs more.
  const auto after = perf::PredictIteration(m.model, r, plan, m.params);
  ASSERT_TRUE(after) << after.error;
  EXPECT_NEAR(after->iter - linear, 8 * (2e-4 + 2 * 5e-4), 1e-12);
}

TEST(PlanSelection, AgentPlansHaveTheAgentsShapes) {
  EXPECT_EQ(AgentExecutionPlan(Plan::kDp, 3, 8, 1), (perf::ExecutionPlan{.dp = 3, .ga_steps = 3}));
  EXPECT_EQ(AgentExecutionPlan(Plan::kGa, 4, 8, 1), (perf::ExecutionPlan{.dp = 4, .ga_steps = 2}));
  EXPECT_EQ(AgentExecutionPlan(Plan::kPp, 2, 8, 1),
            (perf::ExecutionPlan{.dp = 1, .pp = 2, .micro_batches = 8}));
  EXPECT_EQ(AgentExecutionPlan(Plan::kPp, 1, 8, 1), (perf::ExecutionPlan{.dp = 1, .ga_steps = 8}));
  EXPECT_EQ(AgentExecutionPlan(Plan::kTp, 2, 8, 1),
            (perf::ExecutionPlan{.dp = 1, .tp = 2, .ga_steps = 8}));
  EXPECT_EQ(AgentExecutionPlan(Plan::kZeroOffload, 2, 8, 3),
            (perf::ExecutionPlan{
                .dp = 2, .ga_steps = 4, .zero_stage = 2, .offload = true, .cpu_threads = 3}));
}

}  // namespace
}  // namespace elastic::agent
