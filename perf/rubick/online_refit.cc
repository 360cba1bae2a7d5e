// Measured generations become profiled points; a refit runs perf::FitPerfParams on them.
#include "perf/rubick/online_refit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <utility>

namespace elastic::agent {
namespace {

// Parameter indices (perf::ParamName order) a refit on fewer than 7 points frees, one per point
// beyond the first: the fixed cost per iteration first (it separates one
// rank's time from the rest), then the backward pass, the sync overlap and the optimizer.
constexpr int kPartialFitOrder[] = {6 /*k_const*/, 0 /*k_bwd*/, 1 /*k_sync*/, 2 /*k_opt*/};

// What a calibration scales: a worker's compute speed (every forward and backward time) or the
// network (the bandwidths between ranks), both assumed in a model without a profile.
enum class Speed { kCompute, kNetwork };

void Scale(perf::ProfiledPoint& point, Speed speed, double factor) {
  if (speed == Speed::kNetwork) {
    point.resources.b_intra *= factor;
    point.resources.b_inter *= factor;
    return;
  }
  point.resources.gpu_flops *= factor;
  point.resources.fwd_s_per_pass /= factor;
  if (point.resources.backward) {
    point.resources.backward->s_per_pass /= factor;
    point.resources.backward->s_per_sample /= factor;
  }
}

void Scale(perf::FittedModel& model, Speed speed, double factor) {
  if (speed == Speed::kNetwork) {
    model.b_intra *= factor;
    model.b_inter *= factor;
  } else {
    model.model.fwd_s_per_sample /= factor;
    model.fwd_s_per_pass /= factor;
    if (model.backward) {
      model.backward->s_per_pass /= factor;
      model.backward->s_per_sample /= factor;
    }
  }
  for (perf::ProfiledPoint& point : model.fit_points) Scale(point, speed, factor);
}

// The factor within 1e-3 .. 1e3 that predicts `points` best (least squared log error; Rmsle with
// no offset): a grid, then golden-section search around its best cell. Where the error does not
// depend on it (a flat objective: e.g. the network when no point spans ranks), 1. Deterministic.
double BestFactor(const perf::ModelDesc& model, const std::vector<perf::ProfiledPoint>& points,
                  const perf::PerfParams& params, Speed speed) {
  auto cost = [&](double log_factor) {
    std::vector<perf::ProfiledPoint> scaled = points;
    for (perf::ProfiledPoint& p : scaled) Scale(p, speed, std::exp(log_factor));
    return perf::Rmsle(model, scaled, params, /*log_offset=*/0.0);
  };
  const double range = std::log(1e3);
  constexpr int kCells = 48;
  const double unchanged = cost(0);
  double best = 0, best_cost = unchanged;
  for (int i = 0; i <= kCells; ++i) {
    const double u = -range + 2 * range * i / kCells;
    if (const double c = cost(u); c < best_cost) best = u, best_cost = c;
  }
  const double cell = 2 * range / kCells;
  double lo = std::max(-range, best - cell), hi = std::min(range, best + cell);
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 60; ++i) {
    const double a = hi - ratio * (hi - lo), b = lo + ratio * (hi - lo);
    if (cost(a) < cost(b)) hi = b; else lo = a;
  }
  const double middle = (lo + hi) / 2;
  if (const double c = cost(middle); c < best_cost) best = middle, best_cost = c;
  // Less than a 0.1 % better fit is no reason to move an assumption.
  return best_cost < unchanged * (1 - 1e-3) ? std::exp(best) : 1.0;
}

bool SamePoint(const perf::ProfiledPoint& a, const perf::ProfiledPoint& b) {
  return perf::Describe(a.plan) == perf::Describe(b.plan) && a.resources.gpus == b.resources.gpus &&
         a.resources.gpus_per_node == b.resources.gpus_per_node &&
         a.resources.cpus == b.resources.cpus;
}

}  // namespace

OnlineRefit::OnlineRefit(perf::FittedModel model, OnlineRefitOptions options)
    : model_(std::move(model)),
      options_(options),
      fit_model_(model_.model),
      calibrates_(model_.fit_points.empty()) {
  // Each point states its worker's forward rate (gpu_flops, samples/s: fit_points are stored
  // that way, measurements get the model's own), so the fit's model has a rate-based forward
  // time of one "FLOP" per sample.
  fit_model_.fwd_s_per_sample = 0;
  fit_model_.fwd_flops_per_sample = 1;
}

std::optional<std::string> OnlineRefit::AddMeasurement(const PlanRequest& request,
                                                       const NodeAllocation& allocation,
                                                       const perf::ExecutionPlan& plan,
                                                       double samples_per_s) {
  if (!(samples_per_s > 0)) return std::string("no positive throughput measured");
  const std::int64_t ranks =
      static_cast<std::int64_t>(allocation.nodes) * std::max(1, allocation.workers_per_node);
  if (plan.pp <= 1 && request.ests % ranks != 0) {
    return std::to_string(request.ests) + " ESTs on " + std::to_string(ranks) +
           " ranks: the ranks host unequal EST counts, which the fitted points cannot express";
  }
  if (calibrates_) {
    // Without a profile every point is the job's own: the fit evaluates them at its batch and
    // gradient exchange (a profile's points keep the profile job's, model_.model's).
    fit_model_.global_batch = static_cast<int>(request.global_batch);
    fit_model_.gradient_exchange = GradientExchangeUnder(request.determinism);
  }
  Result<perf::IterationTime> predicted = PredictAgentPlan(model_, request, allocation, plan);
  if (!predicted) return "the model cannot describe the plan: " + predicted.error;
  perf::ProfiledPoint point;
  point.plan = plan;
  point.resources = AgentResources(model_, allocation, plan);
  const double forward_s = perf::ForwardSecondsPerSample(model_.model, point.resources);
  if (!(forward_s > 0)) return std::string("the model has no forward time");
  point.resources.gpu_flops = 1.0 / forward_s;
  point.throughput = samples_per_s;
  for (perf::ProfiledPoint& old : measured_) {
    if (SamePoint(old, point)) {
      old = point;
      return std::nullopt;
    }
  }
  measured_.push_back(point);
  return std::nullopt;
}

perf::FittedModel OnlineRefit::ModelWithMeasurements() const {
  perf::FittedModel saved = model_;
  saved.fit_points.insert(saved.fit_points.end(), measured_.begin(), measured_.end());
  return saved;
}

std::string OnlineRefit::Refit() {
  const int distinct = static_cast<int>(model_.fit_points.size() + measured_.size());
  if (measured_.empty()) return "refit deferred: nothing measured yet";
  std::vector<perf::ProfiledPoint> points = WeightedPoints();
  const double before =
      perf::Rmsle(fit_model_, points, model_.params, perf::FitOptions{}.log_offset);
  std::string calibrated;
  if (calibrates_) calibrated = Calibrate(points);
  perf::FitOptions options = FitOptionsFor(points, distinct);
  const int free = static_cast<int>(std::count(options.free.begin(), options.free.end(), true));
  double after = perf::Rmsle(fit_model_, points, model_.params, options.log_offset);
  if (free > 0) {
    Result<perf::FitResult> fit = perf::FitPerfParams(fit_model_, points, options);
    if (!fit) return calibrated + "refit failed, the parameters are unchanged: " + fit.error;
    model_.params = fit->params;
    after = fit->rmsle;
  }
  model_.rmsle = after;
  model_.points = distinct;
  ++refits_;
  char text[240];
  std::snprintf(text, sizeof text,
                "refit on %zu earlier + %zu measured point(s), %d parameter(s) free: RMSLE %.4f "
                "-> %.4f",
                model_.fit_points.size(), measured_.size(), free, before, after);
  return calibrated + text;
}

std::vector<perf::ProfiledPoint> OnlineRefit::WeightedPoints() const {
  std::vector<perf::ProfiledPoint> points = model_.fit_points;
  for (const perf::ProfiledPoint& point : measured_) {
    for (int i = 0; i < options_.measurement_weight; ++i) points.push_back(point);
  }
  return points;
}

// The model's compute speed (and, once a point spans several ranks, its network) scaled by the
// factors that predict the points best, in alternating rounds; every stored point and `points`
// alike. Returns the note's first part.
std::string OnlineRefit::Calibrate(std::vector<perf::ProfiledPoint>& points) {
  bool spans_ranks = false;
  for (const perf::ProfiledPoint& point : points) spans_ranks |= point.resources.gpus > 1;
  double compute = 1, network = 1;
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    for (Speed speed : {Speed::kCompute, Speed::kNetwork}) {
      if (speed == Speed::kNetwork && !spans_ranks) continue;
      const double factor = BestFactor(fit_model_, points, model_.params, speed);
      if (factor == 1.0) continue;
      (speed == Speed::kCompute ? compute : network) *= factor;
      Scale(model_, speed, factor);
      for (perf::ProfiledPoint& point : measured_) Scale(point, speed, factor);
      for (perf::ProfiledPoint& point : points) Scale(point, speed, factor);
    }
  }
  char text[200];
  std::snprintf(text, sizeof text,
                "calibrated compute x%.3f (forward %.3g s per sample), network x%.3f (%.3g B/s "
                "between nodes); ",
                compute, perf::ForwardSecondsPerSample(model_.model, perf::Resources{}), network,
                model_.b_inter);
  return text;
}

// All 7 parameters from 7 points on (the offload ones only with a ZeRO-Offload point); below
// that one parameter per point beyond the first (kPartialFitOrder).
perf::FitOptions OnlineRefit::FitOptionsFor(const std::vector<perf::ProfiledPoint>& points,
                                            int distinct) const {
  perf::FitOptions options;
  options.starts = options_.starts;
  options.max_evals_per_start = options_.max_evals_per_start;
  options.initial = model_.params;
  if (distinct < perf::kMinFitPoints) {
    options.free.fill(false);
    const int count = std::min<int>(distinct - 1, static_cast<int>(std::size(kPartialFitOrder)));
    for (int i = 0; i < count; ++i) options.free[kPartialFitOrder[i]] = true;
    options.min_points = 1;
    return options;
  }
  // Offload parameters stay as they are when no point runs ZeRO-Offload (nothing informs them).
  bool any_offload = false;
  for (const perf::ProfiledPoint& point : points) any_offload |= point.plan.offload;
  if (!any_offload) {
    options.free[3] = options.free[4] = options.free[5] = false;  // k_opt_off, k_off, k_swap
  }
  return options;
}

}  // namespace elastic::agent
