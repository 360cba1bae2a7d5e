// Training-set choice and relative prediction errors for `elastic-plan fit`.
#include "perf/rubick/fit_evaluation.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>

namespace elastic::perf {
namespace {

FitSplit Complete(std::vector<int> train, size_t total) {
  std::sort(train.begin(), train.end());
  FitSplit split;
  split.train = train;
  for (size_t i = 0; i < total; ++i) {
    if (!std::binary_search(train.begin(), train.end(), static_cast<int>(i))) {
      split.test.push_back(static_cast<int>(i));
    }
  }
  return split;
}

}  // namespace

Result<FitSplit> DefaultFitSplit(std::span<const ProfiledRun> runs, int n) {
  if (n < kMinFitPoints) {
    return Result<FitSplit>::Fail("fitting needs at least " + std::to_string(kMinFitPoints) +
                                  " points (Rubick §4.3), got " + std::to_string(n));
  }
  if (static_cast<int>(runs.size()) < n) {
    return Result<FitSplit>::Fail("the profile holds " + std::to_string(runs.size()) +
                                  " points, fewer than the " + std::to_string(n) +
                                  " to fit on (at least " + std::to_string(kMinFitPoints) +
                                  ", Rubick §4.3): profile more configurations");
  }
  std::vector<int> chosen;
  std::vector<bool> taken(runs.size(), false);
  auto take = [&](size_t i) {
    chosen.push_back(static_cast<int>(i));
    taken[i] = true;
  };
  // §4.3: three of the fitting runs are ZeRO-Offload (the only ones that move k_opt_off, k_off
  // and k_swap), spread over distinct (workers, c).
  std::set<std::pair<int, int>> offload_kinds;
  for (size_t i = 0; i < runs.size() && offload_kinds.size() < 3; ++i) {
    const ProfiledPoint& p = runs[i].point;
    if (p.plan.offload && offload_kinds.insert({p.resources.gpus, p.plan.cpu_threads}).second) {
      take(i);
    }
  }
  std::set<std::tuple<int, int, int>> kinds;
  for (size_t i = 0; i < runs.size() && static_cast<int>(chosen.size()) < n; ++i) {
    const ProfiledPoint& p = runs[i].point;
    if (taken[i] || p.plan.offload) continue;
    if (kinds.insert({static_cast<int>(Family(p.plan)), p.resources.gpus, runs[i].intra_threads})
            .second) {
      take(i);
    }
  }
  for (size_t i = 0; i < runs.size() && static_cast<int>(chosen.size()) < n; ++i) {
    if (!taken[i]) take(i);
  }
  return Result<FitSplit>::Ok(Complete(std::move(chosen), runs.size()));
}

Result<FitSplit> ExplicitFitSplit(std::span<const ProfiledRun> runs, std::span<const int> indices) {
  std::set<int> seen;
  for (int index : indices) {
    if (index < 0 || index >= static_cast<int>(runs.size())) {
      return Result<FitSplit>::Fail("training index " + std::to_string(index) +
                                    " is out of range: expected 0 to " +
                                    std::to_string(static_cast<int>(runs.size()) - 1));
    }
    if (!seen.insert(index).second) {
      return Result<FitSplit>::Fail("training index " + std::to_string(index) + " is given twice");
    }
  }
  if (static_cast<int>(seen.size()) < kMinFitPoints) {
    return Result<FitSplit>::Fail("fitting needs at least " + std::to_string(kMinFitPoints) +
                                  " points (Rubick §4.3), got " + std::to_string(seen.size()));
  }
  return Result<FitSplit>::Ok(Complete({seen.begin(), seen.end()}, runs.size()));
}

FitEvaluation EvaluateFit(const ModelDesc& model, std::span<const ProfiledRun> runs,
                          const FitSplit& split, const PerfParams& params) {
  FitEvaluation evaluation;
  for (size_t i = 0; i < runs.size(); ++i) {
    PointPrediction row;
    row.index = static_cast<int>(i);
    row.trained = std::binary_search(split.train.begin(), split.train.end(), row.index);
    row.measured = runs[i].point.throughput;
    Result<IterationTime> predicted =
        PredictIteration(model, runs[i].point.resources, runs[i].point.plan, params);
    row.predicted = predicted ? predicted->throughput : 0;
    row.rel_error = std::abs(row.predicted - row.measured) / row.measured;
    evaluation.points.push_back(row);
  }
  auto summarize = [&](const std::vector<int>& indices, double& avg, double& max) {
    double sum = 0;
    for (int i : indices) {
      sum += evaluation.points[i].rel_error;
      max = std::max(max, evaluation.points[i].rel_error);
    }
    avg = indices.empty() ? 0 : sum / static_cast<double>(indices.size());
  };
  summarize(split.test, evaluation.test_avg_rel_error, evaluation.test_max_rel_error);
  summarize(split.train, evaluation.train_avg_rel_error, evaluation.train_max_rel_error);
  return evaluation;
}

}  // namespace elastic::perf
