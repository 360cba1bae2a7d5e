// Hand-computed cases for each term of Rubick's Eq. (1) (perf/rubick/perf_model.h).
#include "perf/rubick/perf_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/perf/perf_fixtures.h"

namespace elastic::perf {
namespace {

using testing::OneNode;
using testing::RoundParams;
using testing::SmallModel;

IterationTime Predict(const Resources& r, const ExecutionPlan& plan,
                      const ModelDesc& m = SmallModel()) {
  Result<IterationTime> t = PredictIteration(m, r, plan, RoundParams());
  EXPECT_TRUE(t) << t.error;
  return t ? *t : IterationTime{};
}

TEST(OverlapTime, InterpolatesBetweenSumAndMax) {
  EXPECT_DOUBLE_EQ(OverlapTime(3, 4, 1), 7);     // no overlap
  EXPECT_DOUBLE_EQ(OverlapTime(3, 4, 2), 5);     // (9 + 16)^(1/2)
  EXPECT_NEAR(OverlapTime(3, 4, 200), 4, 1e-9);  // -> max as k grows, no overflow
  EXPECT_NEAR(OverlapTime(1e3, 1e3, 1e3), 1e3 * std::pow(2.0, 1e-3), 1e-9);
  EXPECT_DOUBLE_EQ(OverlapTime(0, 4, 3), 4);
  EXPECT_DOUBLE_EQ(OverlapTime(2, 0, 3), 2);
  EXPECT_DOUBLE_EQ(OverlapTime(0, 0, 3), 0);
}

// P = 1e8, b = 8, 0.01 s per sample forward, k_bwd 2, k_opt 1e-10, k_const 0.05.
TEST(PredictIteration, SingleGpuDp) {
  IterationTime t = Predict(OneNode(1), {});
  EXPECT_DOUBLE_EQ(t.fwd, 0.08);   // 0.01 s x 8 samples
  EXPECT_DOUBLE_EQ(t.bwd, 0.16);   // k_bwd x T_fwd
  EXPECT_DOUBLE_EQ(t.comm_dp, 0);  // d = 1: V_dp = 0
  EXPECT_DOUBLE_EQ(t.cc, 0.24);    // T_fwd + f(T_bwd, 0)
  EXPECT_DOUBLE_EQ(t.opt, 0.01);   // k_opt x P
  EXPECT_DOUBLE_EQ(t.oo, 0.01);    // T_oo = T_opt without offload
  EXPECT_DOUBLE_EQ(t.iter, 0.30);  // + k_const
  EXPECT_DOUBLE_EQ(t.throughput, 8 / 0.30);
}

TEST(PredictIteration, GradientCheckpointingAddsOneForwardToBackward) {
  IterationTime t = Predict(OneNode(1), {.gc = true});
  EXPECT_DOUBLE_EQ(t.bwd, 0.16 + 0.08);
  EXPECT_DOUBLE_EQ(t.iter, 0.08 + 0.24 + 0.01 + 0.05);
}

TEST(PredictIteration, DataParallelWithGradientAccumulation) {
  // d = 2, a = 2: 2 samples per GPU per step. V_dp = 2 bytes x 1e8 x 2(d-1)/d = 2e8 bytes over
  // NVLink (1e10 B/s) = 0.02 s; only the last backward overlaps the sync (k_sync = 2).
  IterationTime t = Predict(OneNode(2), {.dp = 2, .ga_steps = 2});
  EXPECT_DOUBLE_EQ(t.fwd, 0.02);
  EXPECT_DOUBLE_EQ(t.bwd, 0.04);
  EXPECT_DOUBLE_EQ(t.comm_dp, 0.02);
  EXPECT_DOUBLE_EQ(t.cc, 2 * 0.02 + 1 * 0.04 + std::sqrt(0.04 * 0.04 + 0.02 * 0.02));
  EXPECT_DOUBLE_EQ(t.opt, 0.01);  // plain DP: every replica updates all P parameters
  EXPECT_NEAR(t.iter, t.cc + 0.01 + 0.05, 1e-15);
}

// The measured fixed cost of a forward pass is paid once per micro-batch: at one global batch,
// more micro-batches cost more (a GPU's kernel launches); 0 keeps §4.1's linear T_fwd.
TEST(PredictIteration, FixedCostPerForwardPassIsPaidPerMicroBatch) {
  Resources with_pass = OneNode(1);
  with_pass.fwd_s_per_pass = 0.005;
  IterationTime one = Predict(with_pass, {});
  EXPECT_DOUBLE_EQ(one.fwd, 0.08 + 0.005);
  EXPECT_DOUBLE_EQ(one.bwd, 2 * (0.08 + 0.005));
  IterationTime four = Predict(with_pass, {.ga_steps = 4});
  EXPECT_DOUBLE_EQ(four.fwd, 0.02 + 0.005);
  EXPECT_NEAR(four.cc, 4 * 0.025 + 3 * 0.05 + 0.05, 1e-15);
  EXPECT_GT(four.iter, one.iter);
  EXPECT_NEAR(Predict(OneNode(1), {.ga_steps = 4}).iter, Predict(OneNode(1), {}).iter,
              1e-15);  // without it, a changes nothing here
  with_pass.fwd_s_per_pass = -1;
  EXPECT_EQ(CheckPlan(SmallModel(), with_pass, {}), "perf: resources: fwd_s_per_pass must be >= 0");
}

// A measured backward pass replaces T_fwd as what k_bwd scales: its part per sample and its
// fixed part, paid per micro-batch; GC still adds the whole forward pass.
TEST(PredictIteration, MeasuredBackwardPassIsWhatKbwdScales) {
  Resources with_pass = OneNode(1);
  with_pass.fwd_s_per_pass = 0.005;
  with_pass.backward = PassTime{.s_per_pass = 0.001, .s_per_sample = 0.015};
  IterationTime one = Predict(with_pass, {});  // b = 8 samples in one micro-batch, k_bwd = 2
  EXPECT_DOUBLE_EQ(one.fwd, 0.08 + 0.005);
  EXPECT_DOUBLE_EQ(one.bwd, 2 * (8 * 0.015 + 0.001));
  IterationTime four = Predict(with_pass, {.ga_steps = 4});
  EXPECT_DOUBLE_EQ(four.bwd, 2 * (2 * 0.015 + 0.001));
  IterationTime gc = Predict(with_pass, {.ga_steps = 4, .gc = true});
  EXPECT_DOUBLE_EQ(gc.bwd, 2 * (2 * 0.015 + 0.001) + 0.02 + 0.005);
  with_pass.backward->s_per_pass = -0.001;
  const std::string refused =
      "perf: resources: the backward pass needs bwd_s_per_pass >= 0 and bwd_s_per_sample > 0";
  EXPECT_EQ(CheckPlan(SmallModel(), with_pass, {}), refused);
  with_pass.backward = PassTime{.s_per_pass = 0.001, .s_per_sample = 0};
  EXPECT_EQ(CheckPlan(SmallModel(), with_pass, {}), refused);
}

TEST(PredictIteration, DataParallelAcrossNodesUsesInterNodeBandwidth) {
  // 4 GPUs, 2 per node: V_dp = 2e8 x 2 x 3/4 = 3e8 bytes over 1e9 B/s.
  IterationTime t = Predict(OneNode(4, 2), {.dp = 4});
  EXPECT_DOUBLE_EQ(t.comm_dp, 0.3);
  EXPECT_DOUBLE_EQ(t.cc, 0.02 + std::sqrt(0.04 * 0.04 + 0.3 * 0.3));
}

TEST(PredictIteration, ZeroDpPartitionsTheOptimizerStep) {
  IterationTime dp = Predict(OneNode(4), {.dp = 4});
  IterationTime zero = Predict(OneNode(4), {.dp = 4, .zero_stage = 2});
  EXPECT_DOUBLE_EQ(zero.opt, 1e-10 * 1e8 / 4);  // k_opt P / d
  EXPECT_DOUBLE_EQ(zero.comm_dp, dp.comm_dp);   // same V_dp as DP (§4.1)
  EXPECT_DOUBLE_EQ(zero.cc, dp.cc);
}

// S = 2 bytes x 1e8 = 2e8 bytes of gradients per worker; NVLink 1e10 B/s.
TEST(PredictIteration, EstRuntimeGathersEveryEstsGradient) {
  ModelDesc est = SmallModel();
  est.gradient_exchange = GradientExchange::kEstSlots;
  // d = 2, a = 4: each worker gathers the other worker's 4 EST gradients, 4 S, where the ring
  // all-reduce of their sum moves 2 S (d-1)/d = S: a d / 2 = 4 times the volume.
  const ExecutionPlan ga{.dp = 2, .ga_steps = 4};
  EXPECT_DOUBLE_EQ(Predict(OneNode(2), ga, est).comm_dp, 4 * 2e8 / 1e10);
  EXPECT_DOUBLE_EQ(Predict(OneNode(2), ga).comm_dp, 2e8 / 1e10);
  // a = 1, d = 2: one EST per worker, the same bytes as the ring.
  EXPECT_DOUBLE_EQ(Predict(OneNode(2), {.dp = 2}, est).comm_dp,
                   Predict(OneNode(2), {.dp = 2}).comm_dp);
  // d = 4, a = 2: 2 x 3 gathered gradients = 6 S.
  EXPECT_DOUBLE_EQ(Predict(OneNode(4), {.dp = 4, .ga_steps = 2}, est).comm_dp, 6 * 2e8 / 1e10);
  // ZeRO: the owner of each quarter receives the 6 other ESTs' pieces of it (6 S / 4), then
  // gathers the 3 other quarters of parameters (3 S / 4).
  EXPECT_DOUBLE_EQ(Predict(OneNode(4), {.dp = 4, .ga_steps = 2, .zero_stage = 2}, est).comm_dp,
                   (6.0 / 4 + 3.0 / 4) * 2e8 / 1e10);
  // The more volume is on the critical path: T_cc grows with it.
  EXPECT_GT(Predict(OneNode(2), ga, est).cc, Predict(OneNode(2), ga).cc);
}

TEST(PredictIteration, RankPartialsAreGatheredWhole) {
  ModelDesc d0 = SmallModel();
  d0.gradient_exchange = GradientExchange::kRankPartials;
  // d0: each worker gathers the other d - 1 partial sums, whatever a is.
  EXPECT_DOUBLE_EQ(Predict(OneNode(4), {.dp = 4, .ga_steps = 2}, d0).comm_dp, 3 * 2e8 / 1e10);
  EXPECT_DOUBLE_EQ(DataParallelBytes(d0, {.dp = 1}), 0.0);
  EXPECT_EQ(GradientExchangeName(GradientExchange::kRankPartials), "rank-partials");
}

TEST(PredictIteration, TensorParallel) {
  // t = 2 on one node: forward time halves; V_tp = 4*2*(t-1) * b*s*h*l / (d*t) elements of
  // 2 bytes = 8 * 8*128*256*4 / 2 * 2 = 8388608 bytes over 1e10 B/s; T_opt = k_opt P / (t*p).
  IterationTime t = Predict(OneNode(2), {.tp = 2});
  EXPECT_DOUBLE_EQ(t.fwd, 0.04);
  EXPECT_DOUBLE_EQ(t.comm_tp, 8388608 / 1e10);
  EXPECT_DOUBLE_EQ(t.opt, 0.005);
  EXPECT_DOUBLE_EQ(t.cc, 0.04 + 0.08 + 8388608 / 1e10);
}

TEST(PredictIteration, PipelineParallel) {
  // p = 2, m = 4: a micro-batch of 2 samples takes 0.02 s through the whole model, so
  // T_fwd = 0.02 / p * (m + p - 1) = 0.05. V_pp = 2*p*b*s*h / (d*t) elements = 1048576 * 2 B.
  IterationTime t = Predict(OneNode(2), {.pp = 2, .micro_batches = 4});
  EXPECT_DOUBLE_EQ(t.fwd, 0.05);
  EXPECT_DOUBLE_EQ(t.bwd, 0.10);
  EXPECT_DOUBLE_EQ(t.comm_pp, 2097152 / 1e10);
  EXPECT_DOUBLE_EQ(t.opt, 0.005);
  EXPECT_DOUBLE_EQ(t.cc, 0.05 + 0.10 + 2097152 / 1e10);
}

TEST(PredictIteration, TensorParallelDividesOnlyTheSplitShare) {
  // A quarter of the pass runs whole on every rank: t = 2 computes 0.25 + 0.75 / 2 = 0.625 of it,
  // t = 4 0.4375 of it; the unsplit share leaves the communication and optimizer terms alone.
  ModelDesc m = SmallModel();
  m.tp_unsplit_share = 0.25;
  EXPECT_DOUBLE_EQ(TensorParallelShare(m, 1), 1.0);
  EXPECT_DOUBLE_EQ(TensorParallelShare(m, 4), 0.4375);
  Result<IterationTime> t = PredictIteration(m, OneNode(2), {.tp = 2}, RoundParams());
  ASSERT_TRUE(t) << t.error;
  EXPECT_DOUBLE_EQ(t->fwd, 0.08 * 0.625);
  EXPECT_DOUBLE_EQ(t->bwd, 2 * 0.08 * 0.625);
  EXPECT_DOUBLE_EQ(t->comm_tp, 8388608 / 1e10);
  // Unsplit, the prediction is §4.1's (the TensorParallel test above).
  m.tp_unsplit_share = 0;
  EXPECT_DOUBLE_EQ(PredictIteration(m, OneNode(2), {.tp = 2}, RoundParams())->fwd, 0.04);
}

TEST(PredictIteration, PipelinePaceIsTheSlowestStage) {
  // Blocks 0.1, 0.2 | 0.3, 0.4: stage 1 holds 0.7 of the model. p = 2, m = 4: the first
  // micro-batch crosses both stages (1), the other 3 leave at stage 1's pace: 1 + 3 * 0.7 = 3.1
  // micro-batch times of 0.02 s. Equal shares give §4.1's (m + p - 1) / p = 2.5.
  ModelDesc m = SmallModel();
  m.block_shares = {0.1, 0.2, 0.3, 0.4};
  EXPECT_DOUBLE_EQ(PipelinePassFactor(m, 2, 4), 3.1);
  EXPECT_DOUBLE_EQ(PipelinePassFactor(m, 4, 4), 1 + 3 * 0.4);
  EXPECT_DOUBLE_EQ(PipelinePassFactor(m, 1, 1), 1.0);
  Result<IterationTime> t =
      PredictIteration(m, OneNode(2), {.pp = 2, .micro_batches = 4}, RoundParams());
  ASSERT_TRUE(t) << t.error;
  EXPECT_DOUBLE_EQ(t->fwd, 0.02 * 3.1);
  EXPECT_DOUBLE_EQ(t->bwd, 2 * 0.02 * 3.1);
  m.block_shares = {0.25, 0.25, 0.25, 0.25};
  EXPECT_DOUBLE_EQ(PipelinePassFactor(m, 2, 4), 2.5);
  m.block_shares.clear();
  EXPECT_DOUBLE_EQ(PipelinePassFactor(m, 4, 8), 11.0 / 4);
}

TEST(PredictIteration, ZeroOffload) {
  // d = 2, c = 4: T_opt = k_opt_off P / (d c) = 1e-9 * 1e8 / 8; T_off = 2e8 B / (d * 5e9 B/s);
  // T_oo = f^{k_off}(T_comm_dp, T_off) + f^{k_swap}(T_opt, T_off), both k = 2.
  IterationTime t =
      Predict(OneNode(2), {.dp = 2, .zero_stage = 2, .offload = true, .cpu_threads = 4});
  EXPECT_DOUBLE_EQ(t.opt, 0.0125);
  EXPECT_DOUBLE_EQ(t.off, 0.02);
  EXPECT_DOUBLE_EQ(t.comm_dp, 0.02);
  EXPECT_DOUBLE_EQ(t.oo, std::sqrt(2 * 0.02 * 0.02) + std::sqrt(0.0125 * 0.0125 + 0.02 * 0.02));
  EXPECT_DOUBLE_EQ(t.cc, 0.04 + std::sqrt(0.08 * 0.08 + 0.02 * 0.02));
  EXPECT_DOUBLE_EQ(t.iter, t.cc + t.oo + 0.05);
}

TEST(PredictIteration, MoreCpuThreadsSpeedUpOffload) {
  auto with = [](int c) {
    return Predict(OneNode(1), {.zero_stage = 2, .offload = true, .cpu_threads = c}).throughput;
  };
  EXPECT_LT(with(1), with(4));
  EXPECT_LT(with(4), with(16));
}

TEST(PredictIteration, ForwardTimeFromFlops) {
  ModelDesc m = SmallModel();
  m.fwd_s_per_sample = 0;
  m.fwd_flops_per_sample = 1e12;
  Resources r = OneNode(1);
  EXPECT_FALSE(PredictIteration(m, r, {}, RoundParams()));  // no device rate: no forward time
  r.gpu_flops = 1e14;
  EXPECT_DOUBLE_EQ(ForwardSecondsPerSample(m, r), 0.01);
  EXPECT_DOUBLE_EQ(Predict(r, {}, m).iter, 0.30);
}

TEST(Bandwidths, BottleneckOfEachDimension) {
  // 8 GPUs, 4 per node, ranks TP-innermost: TP {0,1}, DP {0,2}, PP {0,4} (crosses nodes).
  GroupBandwidths bw = Bandwidths(OneNode(8, 4), {.dp = 2, .tp = 2, .pp = 2});
  EXPECT_DOUBLE_EQ(bw.tp, 1e10);
  EXPECT_DOUBLE_EQ(bw.dp, 1e10);
  EXPECT_DOUBLE_EQ(bw.pp, 1e9);
  bw = Bandwidths(OneNode(8, 4), {.dp = 4, .tp = 2});  // DP {0,2,4,6} crosses
  EXPECT_DOUBLE_EQ(bw.dp, 1e9);
  EXPECT_DOUBLE_EQ(bw.pp, 0);  // p = 1: no PP communication
  EXPECT_DOUBLE_EQ(Bandwidths(OneNode(8, 4), {.tp = 8}).tp, 1e9);
  EXPECT_DOUBLE_EQ(Bandwidths(OneNode(6, 4), {.dp = 6}).dp, 1e9);  // 4 + 2 GPUs
  EXPECT_DOUBLE_EQ(Bandwidths(OneNode(3, 4), {.dp = 3}).dp, 1e10);
}

TEST(CheckPlan, RefusesPlansOutsideThePaperModel) {
  const ModelDesc m = SmallModel();
  auto why = [&](const Resources& r, const ExecutionPlan& p) { return CheckPlan(m, r, p); };
  EXPECT_EQ(why(OneNode(4), {.dp = 4}), "");
  EXPECT_NE(why(OneNode(4), {.dp = 2}).find("d*t*p = 2 but the allocation has 4 GPUs"),
            std::string::npos);
  EXPECT_NE(why(OneNode(3), {.dp = 3}).find("not a multiple of d*a*m = 3"), std::string::npos);
  EXPECT_NE(why(OneNode(1), {.micro_batches = 2}).find("need pp > 1"), std::string::npos);
  EXPECT_NE(why(OneNode(2), {.pp = 2, .ga_steps = 2}).find("micro-batches"), std::string::npos);
  EXPECT_NE(why(OneNode(3), {.pp = 3}).find("pp 3 does not divide the model's 4 layers"),
            std::string::npos);
  EXPECT_NE(why(OneNode(2), {.tp = 2, .zero_stage = 2}).find("DP-based"), std::string::npos);
  EXPECT_NE(why(OneNode(2), {.dp = 2, .zero_stage = 3}).find("zero stage 3"), std::string::npos);
  EXPECT_NE(why(OneNode(1), {.offload = true, .cpu_threads = 1}).find("zero stage 2"),
            std::string::npos);
  EXPECT_NE(why(OneNode(1), {.zero_stage = 2, .offload = true}).find("cpu_threads >= 1"),
            std::string::npos);
  EXPECT_NE(why(OneNode(1), {.zero_stage = 2, .offload = true, .cpu_threads = 17})
                .find("c*g = 17 CPU threads but the allocation has 16"),
            std::string::npos);
  ModelDesc cnn = m;
  cnn.seq_len = 0;
  EXPECT_NE(CheckPlan(cnn, OneNode(2), {.tp = 2}).find("seq_len and hidden"), std::string::npos);
  ModelDesc shares = m;
  shares.tp_unsplit_share = 1;
  EXPECT_NE(CheckPlan(shares, OneNode(1), {}).find("tp_unsplit_share must be in [0, 1)"),
            std::string::npos);
  shares.tp_unsplit_share = 0;
  shares.block_shares = {0.5, 0.5};
  EXPECT_NE(CheckPlan(shares, OneNode(1), {}).find("block_shares has 2 entries for 4 layers"),
            std::string::npos);
  Resources no_network = OneNode(2);
  no_network.b_intra = 0;
  EXPECT_NE(CheckPlan(m, no_network, {.dp = 2}).find("b_intra/b_inter"), std::string::npos);
  EXPECT_FALSE(PredictIteration(m, OneNode(4), {.dp = 2}, RoundParams()));
}

TEST(PerfParams, VectorRoundTripAndNames) {
  PerfParams k = RoundParams();
  ParamVector v = ToVector(k);
  EXPECT_EQ(v[0], k.k_bwd);
  EXPECT_EQ(v[6], k.k_const);
  EXPECT_EQ(ToVector(FromVector(v)), v);
  EXPECT_EQ(ParamName(0), "k_bwd");
  EXPECT_EQ(ParamName(3), "k_opt_off");
  EXPECT_EQ(ParamName(6), "k_const");
}

}  // namespace
}  // namespace elastic::perf
