// Properties of the burst split over random chains and random series-parallel graphs:
// the limit holds, chains match exhaustive enumeration, no plan loses to the best uniform
// data-parallel plan, all counts never lose to powers of two, and the fast transition search
// agrees with the exhaustive scan.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "perf/burst/layer_graph.h"
#include "perf/burst/burst_split.h"
#include "tests/unit/burst/burst_test_util.h"

namespace elastic::burst {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class RandomProfiles {
 public:
  explicit RandomProfiles(unsigned seed) : rng_(seed) {}

  double Uniform(double lo, double hi) { return std::uniform_real_distribution<>(lo, hi)(rng_); }
  int Int(int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng_); }

  // Per-worker batches 1, 2, 4, ... with a fixed cost plus a per-sample cost (some layers
  // scale well, some barely), like a GPU kernel.
  Layer RandomLayer(const std::string& name, int global_batch, std::vector<int> inputs) {
    Layer layer;
    layer.name = name;
    layer.inputs = std::move(inputs);
    double fixed = Uniform(0.05, 2.0) * 1e-3, per_sample = Uniform(0.0, 1.0) * 1e-3;
    for (int b = 1; b <= global_batch; b *= 2) layer.compute.push_back({b, fixed + per_sample * b});
    layer.param_bytes = Int(0, 3) == 0 ? 0.0 : Uniform(0.0, 8e6);
    layer.output_bytes_per_sample = Uniform(0.0, 1e6);
    return layer;
  }

  ModelProfile Chain(int layers, int global_batch) {
    ModelProfile profile = Base(global_batch);
    for (int i = 0; i < layers; ++i) {
      std::vector<int> inputs;
      if (i > 0) inputs.push_back(i - 1);
      profile.layers.push_back(RandomLayer("l" + std::to_string(i), global_batch, inputs));
    }
    return profile;
  }

  // stem -> (block -> join layer)* -> head; branches of 0-2 layers, sometimes with a nested
  // block inside a branch.
  ModelProfile SeriesParallel(int blocks, int global_batch) {
    ModelProfile profile = Base(global_batch);
    auto add = [&](std::vector<int> inputs) {
      int index = static_cast<int>(profile.layers.size());
      profile.layers.push_back(RandomLayer("l" + std::to_string(index), global_batch, inputs));
      return index;
    };
    std::function<int(int, int)> block = [&](int fork, int depth) {
      std::vector<int> ends;
      int branches = Int(2, 3);
      bool direct_edge = false;  // at most one fork->join edge (an input is listed once)
      for (int k = 0; k < branches; ++k) {
        int length = Int(0, 2), at = fork;
        if (length == 0 && (k == 0 || direct_edge)) length = 1;
        direct_edge = direct_edge || length == 0;
        for (int n = 0; n < length; ++n) {
          at = add({at});
          if (depth == 0 && Int(0, 4) == 0) at = block(at, 1);
        }
        ends.push_back(at);
      }
      return add(ends);
    };
    int at = add({});
    for (int b = 0; b < blocks; ++b) at = block(at, 0);
    add({at});
    return profile;
  }

  double Limit() { return Int(0, 4) == 0 ? kInf : Uniform(1.0, 4.0); }

 private:
  ModelProfile Base(int global_batch) {
    ModelProfile profile;
    profile.name = "random";
    profile.global_batch = global_batch;
    profile.network.bandwidth_bytes_per_s = Uniform(1e9, 1e10);
    profile.network.latency_s = Uniform(0.0, 0.2) * 1e-3;
    return profile;
  }

  std::mt19937 rng_;
};

bool WithinLimit(double amplification, double limit) {
  return amplification <= limit * (1 + 1e-9);
}

// Every assignment of candidate counts, the fastest one within the limit (chains only).
double ExhaustiveOptimum(const ModelProfile& profile, const std::vector<int>& counts,
                         double limit) {
  Decomposition graph = *DecomposeGraph(profile);
  size_t n = profile.layers.size();
  std::vector<size_t> digits(n, 0);
  double best = kInf;
  while (true) {
    Assignment assignment;
    for (size_t d : digits) assignment.gpus.push_back(counts[d]);
    Result<PlanCost> cost = EvaluatePlan(profile, graph, assignment);
    if (cost && WithinLimit(cost->max_layer_amplification, limit)) {
      best = std::min(best, cost->iteration_s);
    }
    size_t i = 0;
    while (i < n && ++digits[i] == counts.size()) digits[i++] = 0;
    if (i == n) return best;
  }
}

BurstSplitOptions Options(int gpus, double limit, CountSet counts = CountSet::kPowersOfTwo) {
  BurstSplitOptions options;
  options.gpus = gpus;
  options.amp_limit = limit;
  options.counts = counts;
  return options;
}

void ExpectSoundSplit(const ModelProfile& profile, const BurstSplitOptions& options,
                      const BurstSplit& split) {
  EXPECT_NEAR(split.searched_iteration_s, split.cost.iteration_s, 1e-9 * split.cost.iteration_s);
  for (size_t i = 0; i < split.cost.layers.size(); ++i) {
    EXPECT_TRUE(WithinLimit(split.cost.layers[i].amplification, options.amp_limit))
        << profile.layers[i].name << " amp " << split.cost.layers[i].amplification << " limit "
        << options.amp_limit;
    EXPECT_LE(split.assignment.gpus[i], options.gpus);
  }
  EXPECT_LE(split.cost.peak_gpus, options.gpus);
  Result<BurstSplit> uniform = BestUniformSplit(profile, options);
  ASSERT_TRUE(uniform) << uniform.error;
  EXPECT_LE(split.cost.iteration_s, uniform->cost.iteration_s * (1 + 1e-9));
}

TEST(BurstProperty, ChainsRespectTheLimitAndMatchExhaustiveSearch) {
  RandomProfiles random(1);
  for (int trial = 0; trial < 150; ++trial) {
    int layers = random.Int(2, 5), gpus = random.Int(0, 1) ? 4 : 8;
    CountSet counts = layers <= 4 && random.Int(0, 1) ? CountSet::kAll : CountSet::kPowersOfTwo;
    ModelProfile profile = random.Chain(layers, random.Int(0, 1) ? 8 : 12);
    BurstSplitOptions options = Options(gpus, random.Limit(), counts);
    SCOPED_TRACE("trial " + std::to_string(trial));
    Result<BurstSplit> result = SplitForBurst(profile, options);
    ASSERT_TRUE(result) << result.error;
    ExpectSoundSplit(profile, options, *result);
    double optimum = ExhaustiveOptimum(profile, result->candidate_counts, options.amp_limit);
    EXPECT_NEAR(result->cost.iteration_s, optimum, 1e-9 * optimum);
  }
}

TEST(BurstProperty, PowersOfTwoUseOnlyPowersAndAllCountsNeverLose) {
  RandomProfiles random(2);
  for (int trial = 0; trial < 100; ++trial) {
    ModelProfile profile = random.Chain(random.Int(2, 8), 16);
    double limit = random.Limit();
    SCOPED_TRACE("trial " + std::to_string(trial));
    Result<BurstSplit> powers = SplitForBurst(profile, Options(12, limit));
    Result<BurstSplit> all = SplitForBurst(profile, Options(12, limit, CountSet::kAll));
    ASSERT_TRUE(powers && all);
    EXPECT_EQ(powers->candidate_counts, (std::vector<int>{1, 2, 4, 8}));
    for (int g : powers->assignment.gpus) EXPECT_EQ(g & (g - 1), 0) << g;
    EXPECT_LE(all->cost.iteration_s, powers->cost.iteration_s * (1 + 1e-9));
  }
}

TEST(BurstProperty, SeriesParallelGraphsAreSound) {
  RandomProfiles random(3);
  for (int trial = 0; trial < 150; ++trial) {
    ModelProfile profile = random.SeriesParallel(random.Int(1, 3), 16);
    BurstSplitOptions options = Options(random.Int(0, 1) ? 8 : 16, random.Limit(),
                                     random.Int(0, 1) ? CountSet::kAll : CountSet::kPowersOfTwo);
    options.separate_branches = random.Int(0, 3) != 0;
    SCOPED_TRACE("trial " + std::to_string(trial));
    Result<BurstSplit> result = SplitForBurst(profile, options);
    ASSERT_TRUE(result) << result.error;
    ExpectSoundSplit(profile, options, *result);
    options.exhaustive = true;
    Result<BurstSplit> scanned = SplitForBurst(profile, options);
    ASSERT_TRUE(scanned);
    EXPECT_NEAR(scanned->cost.iteration_s, result->cost.iteration_s,
                1e-9 * result->cost.iteration_s);
  }
}

// Above 24 source counts the range-minimum tables replace the scan (transition_min.h).
TEST(BurstProperty, RangeMinimumSearchAgreesWithTheScanAtManyCounts) {
  RandomProfiles random(4);
  for (int trial = 0; trial < 40; ++trial) {
    ModelProfile profile =
        trial % 2 ? random.Chain(random.Int(3, 8), 64) : random.SeriesParallel(2, 64);
    BurstSplitOptions options = Options(64, random.Limit(), CountSet::kAll);
    SCOPED_TRACE("trial " + std::to_string(trial));
    Result<BurstSplit> fast = SplitForBurst(profile, options);
    options.exhaustive = true;
    Result<BurstSplit> scanned = SplitForBurst(profile, options);
    ASSERT_TRUE(fast && scanned);
    EXPECT_NEAR(fast->cost.iteration_s, scanned->cost.iteration_s,
                1e-9 * scanned->cost.iteration_s);
    ExpectSoundSplit(profile, options, *fast);
  }
}

TEST(BurstProperty, LimitOfOneNeverAmplifiesGpuSec) {
  RandomProfiles random(5);
  for (int trial = 0; trial < 50; ++trial) {
    ModelProfile profile = random.SeriesParallel(2, 8);
    Result<BurstSplit> result = SplitForBurst(profile, Options(8, 1.0));
    ASSERT_TRUE(result);
    // Every layer's Amp <= 1, so the whole plan's GPU-sec cannot exceed one GPU's.
    EXPECT_LE(result->cost.amplification, 1.0 + 1e-9);
  }
}

}  // namespace
}  // namespace elastic::burst
