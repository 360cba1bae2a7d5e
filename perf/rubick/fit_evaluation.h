// Which profiled points fit the performance model and how well it then predicts the others
// (Rubick §4.3 fits on >= 7 points, 3 of them ZeRO-Offload; §7.1 reports the prediction error on
// unseen configurations). Pure and thread-safe; errors: Result<T>.
#pragma once

#include <span>
#include <vector>

#include "common/result.h"
#include "perf/rubick/perf_json.h"

namespace elastic::perf {

// Indices into the profiled runs: `train` fits, `test` are predicted unseen. Both ascending.
struct FitSplit {
  std::vector<int> train;
  std::vector<int> test;
};

// The documented default choice of `n` training points (docs/perf-model.md): up to 3
// ZeRO-Offload runs, one per distinct (workers, c) in file order; then the other runs, one per
// distinct (plan family, workers, intra-op threads) in file order; then any remaining runs in
// file order until `n` are chosen. Fails when n < kMinFitPoints or there are fewer than n runs.
Result<FitSplit> DefaultFitSplit(std::span<const ProfiledRun> runs, int n);

// Exactly `indices` (0-based, distinct, in range) train; every other run is a test point.
Result<FitSplit> ExplicitFitSplit(std::span<const ProfiledRun> runs, std::span<const int> indices);

struct PointPrediction {
  int index = 0;
  bool trained = false;   // one of the fit's points
  double measured = 0;    // samples/s
  double predicted = 0;   // samples/s (0 when the model refuses the plan)
  double rel_error = 0;   // |predicted - measured| / measured
};

struct FitEvaluation {
  std::vector<PointPrediction> points;  // every run, in file order
  double test_avg_rel_error = 0, test_max_rel_error = 0;    // over split.test (0 if none)
  double train_avg_rel_error = 0, train_max_rel_error = 0;  // over split.train
};

// Predicts every run with `params` (PredictIteration on its plan and resources).
FitEvaluation EvaluateFit(const ModelDesc& model, std::span<const ProfiledRun> runs,
                          const FitSplit& split, const PerfParams& params);

}  // namespace elastic::perf
