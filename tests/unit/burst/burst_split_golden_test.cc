// Hand-computed burst plans for small chains and branch/join blocks. Units in comments: ms and
// MB; bandwidth 1e9 B/s, so moving 1 MB takes 1 ms. comm counts the forward activations and the
// backward gradients, i.e. twice (bytes/bw + latency).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "perf/burst/burst_split.h"
#include "tests/unit/burst/burst_test_util.h"

namespace elastic::burst {
namespace {

using testing::MakeLayer;
using testing::MakeProfile;

constexpr double kInf = std::numeric_limits<double>::infinity();

BurstSplit Split(const ModelProfile& profile, int gpus, double limit,
                 CountSet counts = CountSet::kPowersOfTwo, bool separate = true) {
  BurstSplitOptions options;
  options.gpus = gpus;
  options.amp_limit = limit;
  options.counts = counts;
  options.separate_branches = separate;
  Result<BurstSplit> result = SplitForBurst(profile, options);
  EXPECT_EQ(result.error, "");
  if (!result) return {};
  EXPECT_NEAR(result->searched_iteration_s, result->cost.iteration_s, 1e-12);
  return *result;
}

// B = 2, G = 2, latency 1 ms.
//   l1: 10 ms at batch 2 (1 GPU), 5 ms at batch 1 (2 GPUs); 0.5 MB params; 0.5 MB/sample out.
//   l2: 4 ms on 1 GPU, 3 ms on 2; 4 MB params.
// sync(l1,2) = 2*(1/2)*0.5 + 1 = 1.5; sync(l2,2) = 4 + 1 = 5.
// comm l1->l2 between 1 and 2 GPUs: batch output 1 MB, fraction 1/1 - 1/2 -> 0.5 MB:
//   2 * (0.5 + 1) = 3.
// Plans: (1,1) 10 + 4 = 14; (2,1) 6.5 + (3 + 4) = 13.5; (2,2) 6.5 + 3 + 5 = 14.5;
//        (1,2) 10 + (3 + 3 + 5) = 21.
// Amp(l1,2) = 6.5*2/10 = 1.3; Amp(l2,1 after a 2->1 transition) = (3 + 4)*1/4 = 1.75.
ModelProfile TwoLayers() {
  return MakeProfile(2, 1.0, {MakeLayer("l1", {{1, 5}, {2, 10}}, 0.5e6, 0.5e6),
                              MakeLayer("l2", {{1, 3}, {2, 4}}, 4e6, 0)});
}

TEST(BurstGolden, TwoLayerChainBurstsTheFirstLayer) {
  BurstSplit split = Split(TwoLayers(), 2, kInf);
  EXPECT_EQ(split.assignment.gpus, (std::vector<int>{2, 1}));
  EXPECT_NEAR(split.cost.iteration_s, 13.5e-3, 1e-12);
  EXPECT_NEAR(split.cost.layers[0].amplification, 1.3, 1e-9);
  EXPECT_NEAR(split.cost.layers[1].comm_in_s, 3e-3, 1e-12);
  EXPECT_NEAR(split.cost.layers[1].amplification, 1.75, 1e-9);
  // GPU-sec = 6.5*2 + 7*1 = 20 ms; one GPU takes 10 + 4 = 14 ms.
  EXPECT_NEAR(split.cost.gpu_sec, 20e-3, 1e-12);
  EXPECT_NEAR(split.cost.amplification, 20.0 / 14.0, 1e-9);
}

TEST(BurstGolden, TwoLayerChainUnderTightLimitStaysOnOneGpu) {
  // 1.5 < 1.75 rules (2,1) out; (2,2) has Amp(l2) = 8*2/4 = 4.
  BurstSplit split = Split(TwoLayers(), 2, 1.5);
  EXPECT_EQ(split.assignment.gpus, (std::vector<int>{1, 1}));
  EXPECT_NEAR(split.cost.iteration_s, 14e-3, 1e-12);
}

// B = 4, G = 4 (counts 1, 2, 4), latency 1 ms.
//   c1, c2: 2 ms per sample (8, 4, 2 ms on 1, 2, 4 GPUs), no params, 1 MB/sample out (4 MB).
//   fc: 2, 1.5, 1 ms at batch 4, 2, 1; 8 MB params: sync 2 -> 8 + 1 = 9, sync 4 -> 12 + 1 = 13.
// comm of 4 MB: 4<->1: 2*(3 + 1) = 8; 2<->1: 2*(2 + 1) = 6; 4<->2: 2*(1 + 1) = 4.
// (4,4,1): 2 + 2 + (8 + 2) = 14, Amp(fc) = 10*1/2 = 5.
// (2,2,1): 4 + 4 + (6 + 2) = 16, Amp(fc) = 8/2 = 4; Amp(c2,2) = 4*2/8 = 1.
// (1,1,1): 8 + 8 + 2 = 18. fc on 2 or 4 GPUs costs at least 1.5 + 9 (Amp >= 10.5).
ModelProfile ThreeLayers() {
  std::vector<std::pair<int, double>> conv = {{1, 2}, {2, 4}, {4, 8}};
  return MakeProfile(4, 1.0, {MakeLayer("c1", conv, 0, 1e6), MakeLayer("c2", conv, 0, 1e6),
                              MakeLayer("fc", {{1, 1}, {2, 1.5}, {4, 2}}, 8e6, 0)});
}

TEST(BurstGolden, ThreeLayerChainFollowsTheLimit) {
  struct Case {
    double limit;
    std::vector<int> gpus;
    double ms;
  };
  for (const Case& c : {Case{kInf, {4, 4, 1}, 14}, Case{5.0, {4, 4, 1}, 14},
                        Case{4.9, {2, 2, 1}, 16}, Case{3.0, {1, 1, 1}, 18}}) {
    SCOPED_TRACE(c.limit);
    BurstSplit split = Split(ThreeLayers(), 4, c.limit);
    EXPECT_EQ(split.assignment.gpus, c.gpus);
    EXPECT_NEAR(split.cost.iteration_s, c.ms * 1e-3, 1e-12);
    EXPECT_LE(split.cost.max_layer_amplification, c.limit * (1 + 1e-9));
  }
}

TEST(BurstGolden, BestUniformPlanOfThreeLayerChain) {
  // Uniform: 1 GPU 18; 2 GPUs 4 + 4 + 1.5 + 9 = 18.5; 4 GPUs 2 + 2 + 1 + 13 = 18: 1 GPU wins
  // the tie (first found); burst beats it by 4 ms.
  BurstSplitOptions options;
  options.gpus = 4;
  options.amp_limit = kInf;
  Result<BurstSplit> uniform = BestUniformSplit(ThreeLayers(), options);
  ASSERT_TRUE(uniform);
  EXPECT_EQ(uniform->assignment.gpus, (std::vector<int>{1, 1, 1}));
  EXPECT_NEAR(uniform->cost.iteration_s, 18e-3, 1e-12);
}

// B = 12, G = 4, latency 0. conv: 4 ms at batch 3 and 4 (underused GPU), 6 at 6, 12 at 12;
// 3 MB params. head: 1 ms at any batch, no params, no activation (transfers cost 0).
// comp(conv) = 12, 6, 4, 4 on 1..4 GPUs (batches 12, 6, 4, 3);
// sync(conv) = 2(g-1)/g*3 = 0, 3, 4, 4.5; T = 12, 9, 8, 8.5; Amp = 1, 1.5, 2, 2.83.
// Powers of two pick 4 GPUs (8.5 + 1), all counts 3 GPUs (8 + 1); with limit 2.5, 4 GPUs are
// out and powers of two fall back to 2 (9 + 1).
ModelProfile ThreeGpuSweetSpot() {
  return MakeProfile(12, 0.0,
                     {MakeLayer("conv", {{3, 4}, {4, 4}, {6, 6}, {12, 12}}, 3e6, 0),
                      MakeLayer("head", {{1, 1}, {12, 1}}, 0, 0)});
}

TEST(BurstGolden, AllCountsFindThreeGpusPowersOfTwoCannot) {
  EXPECT_NEAR(Split(ThreeGpuSweetSpot(), 4, kInf).cost.iteration_s, 9.5e-3, 1e-12);
  BurstSplit all = Split(ThreeGpuSweetSpot(), 4, kInf, CountSet::kAll);
  EXPECT_EQ(all.assignment.gpus[0], 3);
  EXPECT_NEAR(all.cost.iteration_s, 9e-3, 1e-12);
  EXPECT_EQ(all.candidate_counts, (std::vector<int>{1, 2, 3, 4}));

  BurstSplit powers = Split(ThreeGpuSweetSpot(), 4, 2.5);
  EXPECT_EQ(powers.assignment.gpus[0], 2);
  EXPECT_NEAR(powers.cost.iteration_s, 10e-3, 1e-12);
  EXPECT_NEAR(Split(ThreeGpuSweetSpot(), 4, 2.5, CountSet::kAll).cost.iteration_s, 9e-3, 1e-12);
}

// fork -> {a, b} -> join, B = 2, G = 2, latency 0.
//   fork: 4 ms on 1 GPU, 2 on 2; 0.5 MB/sample out (1 MB per batch).
//   a: 6 / 3 ms on 1 / 2 GPUs, no params. b: 3.5 / 3 ms, 3 MB params: sync(b,2) = 3 -> 6.
//   join: 2 / 1 ms. Every layer outputs 0.5 MB/sample: nested 1<->2 comm = 2*0.5 = 1.
// Uniform 2 GPUs: 2 + 3 + 6 + 1 = 12. Burst: fork 2, a 2, b 1 (in 1 + 3.5, out 1), join 2:
//   2 + 3 + 5.5 + 1 = 11.5; join's T = transfers in (0 + 1) + 1 = 2, Amp = 2*2/2 = 2.
// Limit 1.9: b on 2 GPUs has Amp 6*2/3.5 > 1.9, and the join on 2 GPUs cannot take b's transfer;
//   fork 2, a 2 (out 2->1: 1), b 1 (in 1), join 1: 2 + (3 + 1) + (1 + 3.5) + 2 = 12.5;
//   join's Amp = (1 + 2)/2 = 1.5. Uniform under 1.9: only 1 GPU, 4 + 6 + 3.5 + 2 = 15.5.
ModelProfile SerialBranches() {
  return MakeProfile(2, 0.0,
                     {MakeLayer("fork", {{1, 2}, {2, 4}}, 0, 0.5e6),
                      MakeLayer("a", {{1, 3}, {2, 6}}, 0, 0.5e6, {0}),
                      MakeLayer("b", {{1, 3}, {2, 3.5}}, 3e6, 0.5e6, {0}),
                      MakeLayer("join", {{1, 1}, {2, 2}}, 0, 0, {1, 2})});
}

TEST(BurstGolden, BranchJoinRunsBranchesAtTheirOwnScale) {
  for (double limit : {kInf, 2.0}) {
    BurstSplit split = Split(SerialBranches(), 2, limit);
    EXPECT_EQ(split.assignment.gpus, (std::vector<int>{2, 2, 1, 2}));
    EXPECT_NEAR(split.cost.iteration_s, 11.5e-3, 1e-12);
    EXPECT_NEAR(split.cost.layers[3].comm_in_s, 1e-3, 1e-12);
    EXPECT_NEAR(split.cost.layers[3].amplification, 2.0, 1e-9);
    EXPECT_EQ(split.blocks, 1);
  }
  BurstSplit tight = Split(SerialBranches(), 2, 1.9);
  EXPECT_EQ(tight.assignment.gpus, (std::vector<int>{2, 2, 1, 1}));
  EXPECT_NEAR(tight.cost.iteration_s, 12.5e-3, 1e-12);
  EXPECT_NEAR(tight.cost.layers[3].amplification, 1.5, 1e-9);

  BurstSplitOptions options;
  options.gpus = 2;
  options.amp_limit = 1.9;
  Result<BurstSplit> uniform = BestUniformSplit(SerialBranches(), options);
  ASSERT_TRUE(uniform);
  EXPECT_NEAR(uniform->cost.iteration_s, 15.5e-3, 1e-12);
}

// fork -> {a, b} -> join, B = 2, G = 2, latency 0; nothing scales: fork and join 1 ms, a and b
// 4 ms at any count; 0.25 MB/sample out (0.5 MB per batch).
// Serial on 1 GPU: 1 + 4 + 4 + 1 = 10 (2 GPUs: the same). With b on the second GPU: its
// transfers move whole shares, 2*0.5 = 1 in and 1 out, so b takes 1 + 4 + 1 = 6 beside a's 4:
// 1 + 6 + 1 = 8. Amp(b) = 5/4; the join's T = 0 + 1 (b's transfer) + 1 = 2: Amp 2.
// GPU-sec = 1 + 4 + 5 + 2 = 12 ms over 10 ms on one GPU: amplification 1.2.
ModelProfile ParallelBranches() {
  return MakeProfile(2, 0.0,
                     {MakeLayer("fork", {{1, 1}, {2, 1}}, 0, 0.25e6),
                      MakeLayer("a", {{1, 4}, {2, 4}}, 0, 0.25e6, {0}),
                      MakeLayer("b", {{1, 4}, {2, 4}}, 0, 0.25e6, {0}),
                      MakeLayer("join", {{1, 1}, {2, 1}}, 0, 0, {1, 2})});
}

TEST(BurstGolden, NonCriticalBranchRunsInParallelOnItsOwnGpu) {
  BurstSplit split = Split(ParallelBranches(), 2, 2.0);
  EXPECT_EQ(split.assignment.gpus, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(split.assignment.separate, (std::vector<std::vector<bool>>{{false, true}}));
  EXPECT_NEAR(split.cost.iteration_s, 8e-3, 1e-12);
  EXPECT_TRUE(split.cost.layers[2].parallel);
  EXPECT_FALSE(split.cost.layers[1].parallel);
  EXPECT_NEAR(split.cost.layers[2].amplification, 1.25, 1e-9);
  EXPECT_NEAR(split.cost.layers[3].amplification, 2.0, 1e-9);
  EXPECT_EQ(split.cost.peak_gpus, 2);
  EXPECT_NEAR(split.cost.amplification, 1.2, 1e-9);
}

TEST(BurstGolden, ParallelBranchNeedsAmplificationAndGpus) {
  // The join's Amp would be 2 > 1.9; with one GPU there is no second GPU; or it is switched off.
  EXPECT_NEAR(Split(ParallelBranches(), 2, 1.9).cost.iteration_s, 10e-3, 1e-12);
  EXPECT_NEAR(Split(ParallelBranches(), 1, kInf).cost.iteration_s, 10e-3, 1e-12);
  EXPECT_NEAR(Split(ParallelBranches(), 2, kInf, CountSet::kPowersOfTwo, false).cost.iteration_s,
              10e-3, 1e-12);
}

TEST(BurstSplit, RefusesBadOptionsProfilesAndGraphs) {
  BurstSplitOptions options;
  options.gpus = 0;
  EXPECT_EQ(SplitForBurst(TwoLayers(), options).error,
            "gpus: invalid value 0: expected an integer >= 1");
  options.gpus = 2;
  options.amp_limit = 0.5;
  EXPECT_EQ(SplitForBurst(TwoLayers(), options).error,
            "amplification limit: invalid value 0.5: expected a number >= 1 (1: no GPU-sec "
            "increase; inf: no limit)");
  options.amp_limit = 2;
  ModelProfile bad = TwoLayers();
  bad.layers[1].compute[0].seconds = -1;
  EXPECT_EQ(SplitForBurst(bad, options).error,
            "layer 1 (\"l2\"): compute time at batch 1: expected a finite time > 0");
  ModelProfile dead = TwoLayers();
  dead.layers.push_back(MakeLayer("l3", {{1, 1}}, 0, 0, {0}));
  EXPECT_NE(SplitForBurst(dead, options).error.find("its output is never used"), std::string::npos);
  EXPECT_FALSE(SplitForBurst(dead, options));
}

TEST(BurstSplit, CandidateCounts) {
  EXPECT_EQ(CandidateCounts(6, 64, CountSet::kPowersOfTwo), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(CandidateCounts(1024, 8, CountSet::kPowersOfTwo), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(CandidateCounts(5, 3, CountSet::kAll), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(CandidateCounts(1024, 8192, CountSet::kPowersOfTwo).size(), 11u);
}

}  // namespace
}  // namespace elastic::burst
