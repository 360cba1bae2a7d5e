// Multi-start bounded BOBYQA (NLopt) over the log of each parameter, scaled to [0, 1].
#include "perf/rubick/fitter.h"

#include <nlopt.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace elastic::perf {
namespace {

constexpr int kPolishRounds = 5;

// The search runs in z in [0, 1]^n: k_i = exp(ln lo_i + z_i (ln hi_i - ln lo_i)). Log scale
// because the parameters span many decades (k_opt ~ 1e-11 s vs k_bwd ~ 2); [0, 1] so BOBYQA's
// trust region sees every coordinate at the same scale.
struct Problem {
  const ModelDesc* model;
  std::span<const ProfiledPoint> points;
  const FitOptions* options;
  std::vector<int> free_index;  // which parameter each coordinate of z is
  int evaluations = 0;

  PerfParams ToParams(const double* z) const {
    ParamVector v = ToVector(options->initial);
    for (std::size_t i = 0; i < free_index.size(); ++i) {
      const int j = free_index[i];
      const double lo = std::log(options->bounds.lower[j]);
      const double hi = std::log(options->bounds.upper[j]);
      v[j] = std::exp(lo + z[i] * (hi - lo));
    }
    return FromVector(v);
  }

  double ToCoordinate(int j, double value) const {
    const double lo = std::log(options->bounds.lower[j]);
    const double hi = std::log(options->bounds.upper[j]);
    const double z = (std::log(value) - lo) / (hi - lo);
    return std::isfinite(z) ? std::clamp(z, 0.0, 1.0) : 0.0;
  }
};

double Objective(unsigned /*n*/, const double* z, double* /*grad*/, void* data) {
  auto* problem = static_cast<Problem*>(data);
  ++problem->evaluations;
  return Rmsle(*problem->model, problem->points, problem->ToParams(z),
               problem->options->log_offset);
}

// Uniform in [0, 1) from the top 53 bits: mt19937_64's output is fixed by the C++ standard, the
// standard distributions are not.
double Uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::string CheckInputs(const ModelDesc& model, std::span<const ProfiledPoint> points,
                        const FitOptions& options) {
  const int needed = std::max(1, options.min_points);
  if (points.size() < static_cast<std::size_t>(needed)) {
    return "perf: fit: " + std::to_string(points.size()) + " profiled points, expected at least " +
           std::to_string(needed) + (needed == kMinFitPoints ? " (Rubick §4.3)" : "");
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ProfiledPoint& p = points[i];
    if (!(p.throughput > 0) || !std::isfinite(p.throughput)) {
      return "perf: fit: point " + std::to_string(i) + ": throughput " +
             std::to_string(p.throughput) + ", expected a positive number";
    }
    if (std::string why = CheckPlan(model, p.resources, p.plan); !why.empty()) {
      return "perf: fit: point " + std::to_string(i) + ": " + why;
    }
  }
  for (int j = 0; j < kNumPerfParams; ++j) {
    const double lo = options.bounds.lower[j], hi = options.bounds.upper[j];
    if (!(lo > 0) || !(hi > lo)) {
      return "perf: fit: bounds of " + std::string(ParamName(j)) + ": expected 0 < lower < upper";
    }
  }
  if (options.starts < 1 || options.max_evals_per_start < 1) {
    return "perf: fit: starts and max_evals_per_start must be >= 1";
  }
  return {};
}

struct OptimizerDeleter {
  void operator()(nlopt_opt opt) const { nlopt_destroy(opt); }
};
using Optimizer = std::unique_ptr<std::remove_pointer_t<nlopt_opt>, OptimizerDeleter>;

// One bounded local search from z (updated in place); returns the objective or NaN on failure.
double LocalSearch(Problem& problem, std::vector<double>& z) {
  const unsigned n = static_cast<unsigned>(z.size());
  // BOBYQA needs at least two variables; COBYLA covers a single free parameter.
  Optimizer opt(nlopt_create(n >= 2 ? NLOPT_LN_BOBYQA : NLOPT_LN_COBYLA, n));
  if (!opt) return std::nan("");
  std::vector<double> lower(n, 0.0), upper(n, 1.0);
  nlopt_set_lower_bounds(opt.get(), lower.data());
  nlopt_set_upper_bounds(opt.get(), upper.data());
  nlopt_set_min_objective(opt.get(), Objective, &problem);
  nlopt_set_xtol_rel(opt.get(), 1e-10);
  nlopt_set_ftol_abs(opt.get(), 1e-15);
  nlopt_set_maxeval(opt.get(), problem.options->max_evals_per_start);
  double value = 0;
  nlopt_result result = nlopt_optimize(opt.get(), z.data(), &value);
  // ROUNDOFF_LIMITED still leaves the best point found; only hard failures are discarded.
  if (result < 0 && result != NLOPT_ROUNDOFF_LIMITED) return std::nan("");
  return value;
}

}  // namespace

double Rmsle(const ModelDesc& model, std::span<const ProfiledPoint> points,
             const PerfParams& params, double log_offset) {
  if (points.empty()) return 0;
  double sum = 0;
  for (const ProfiledPoint& point : points) {
    Result<IterationTime> time = PredictIteration(model, point.resources, point.plan, params);
    const double predicted = time ? time->throughput : 0.0;
    const double e = std::log(log_offset + predicted) - std::log(log_offset + point.throughput);
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(points.size()));
}

Result<FitResult> FitPerfParams(const ModelDesc& model, std::span<const ProfiledPoint> points,
                                const FitOptions& options) {
  if (std::string why = CheckInputs(model, points, options); !why.empty()) {
    return Result<FitResult>::Fail(std::move(why));
  }
  Problem problem{&model, points, &options, {}, 0};
  for (int j = 0; j < kNumPerfParams; ++j) {
    if (options.free[j]) problem.free_index.push_back(j);
  }
  FitResult best;
  best.params = options.initial;
  best.rmsle = Rmsle(model, points, options.initial, options.log_offset);
  if (problem.free_index.empty()) return Result<FitResult>::Ok(best);

  const ParamVector initial = ToVector(options.initial);
  std::mt19937_64 rng(options.seed);
  std::vector<double> best_z;
  for (int start = 0; start < options.starts; ++start) {
    std::vector<double> z(problem.free_index.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
      const int j = problem.free_index[i];
      z[i] = start == 0 ? problem.ToCoordinate(j, initial[j]) : Uniform01(rng);
    }
    const double value = LocalSearch(problem, z);
    if (std::isnan(value)) continue;
    if (best_z.empty() || value < best.rmsle) {  // strict: ties keep the earlier start
      best_z = z;
      best.rmsle = value;
      best.best_start = start;
    }
  }
  if (best_z.empty()) return Result<FitResult>::Fail("perf: fit: NLopt failed from every start");
  // BOBYQA's final trust region can stop short of the optimum in narrow valleys (the overlap
  // exponents); restarting from the best point rebuilds its quadratic model there.
  for (int polish = 0; polish < kPolishRounds; ++polish) {
    std::vector<double> z = best_z;
    const double value = LocalSearch(problem, z);
    if (std::isnan(value) || !(value < best.rmsle)) break;
    best_z = z;
    best.rmsle = value;
  }
  best.params = problem.ToParams(best_z.data());
  best.evaluations = problem.evaluations;
  return Result<FitResult>::Ok(best);
}

}  // namespace elastic::perf
