// Measured generations become profiled points; a refit runs perf::FitPerfParams on them.
#include "perf/rubick/online_refit.h"

#include <cstdio>
#include <utility>

namespace elastic::agent {
namespace {

bool SamePoint(const perf::ProfiledPoint& a, const perf::ProfiledPoint& b) {
  return perf::Describe(a.plan) == perf::Describe(b.plan) && a.resources.gpus == b.resources.gpus &&
         a.resources.gpus_per_node == b.resources.gpus_per_node &&
         a.resources.cpus == b.resources.cpus;
}

}  // namespace

OnlineRefit::OnlineRefit(perf::FittedModel model, OnlineRefitOptions options)
    : model_(std::move(model)), options_(options), fit_model_(model_.model) {
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
  std::vector<perf::ProfiledPoint> points = model_.fit_points;
  for (const perf::ProfiledPoint& point : measured_) {
    for (int i = 0; i < options_.measurement_weight; ++i) points.push_back(point);
  }
  const int distinct = static_cast<int>(model_.fit_points.size() + measured_.size());
  if (distinct < perf::kMinFitPoints) {
    return "refit deferred: " + std::to_string(distinct) + " point(s) (" +
           std::to_string(model_.fit_points.size()) + " profiled, " +
           std::to_string(measured_.size()) + " measured), the fit needs " +
           std::to_string(perf::kMinFitPoints);
  }
  perf::FitOptions options;
  options.starts = options_.starts;
  options.max_evals_per_start = options_.max_evals_per_start;
  options.initial = model_.params;
  // Offload parameters stay as they are when no point runs ZeRO-Offload (nothing informs them).
  bool any_offload = false;
  for (const perf::ProfiledPoint& point : points) any_offload |= point.plan.offload;
  if (!any_offload) {
    options.free[3] = options.free[4] = options.free[5] = false;  // k_opt_off, k_off, k_swap
  }
  const double before = perf::Rmsle(fit_model_, points, model_.params, options.log_offset);
  Result<perf::FitResult> fit = perf::FitPerfParams(fit_model_, points, options);
  if (!fit) return "refit failed, the model is unchanged: " + fit.error;
  model_.params = fit->params;
  model_.rmsle = fit->rmsle;
  model_.points = distinct;
  ++refits_;
  char text[200];
  std::snprintf(text, sizeof text,
                "refit on %zu profiled + %zu measured point(s): RMSLE %.4f -> %.4f",
                model_.fit_points.size(), measured_.size(), before, fit->rmsle);
  return text;
}

}  // namespace elastic::agent
