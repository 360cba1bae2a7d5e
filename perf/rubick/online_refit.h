// Online refit of the job's performance model (Rubick §4.3: the model is "updated online using
// metrics collected in real training runs when the prediction error exceeds a threshold"): the
// throughput each generation's plan measured becomes a profiled point, and the 7 parameters are
// fitted again on the profile's points (fitted.json's fit_points) plus these, from the current
// parameters. Later plan choices use the refitted model.
//
// A model without a profile (the built-in descriptions, or one bootstrapped from the agent's
// parameter count: default_perf_model.h) has only assumed forward times and bandwidths: its
// refits first calibrate them (one factor on every forward and backward time, and once a point
// spans several ranks one on the bandwidths between ranks, each within 1e-3..1e3, chosen so that
// the points are predicted best). With fewer than 7 points in all, a refit fits one
// of k_const, k_bwd, k_sync, k_opt per point beyond the first; from 7 on, all 7 parameters. So a
// model improves from the first measured generation instead of waiting for 7.
// Pure (no I/O or clocks), deterministic (the fitter's fixed seed); not thread-safe: one per
// supervisor.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "perf/rubick/plan_selection.h"
#include "perf/rubick/fitter.h"
#include "perf/rubick/perf_json.h"

namespace elastic::agent {

struct OnlineRefitOptions {
  int starts = 6;  // local searches (the first from the current parameters): a refit is small
  int max_evals_per_start = 2000;
  // A measured point weighs this many times a profile point (its copies enter the fit): the job's
  // own runs are what the refit must get right.
  int measurement_weight = 2;
};

class OnlineRefit {
 public:
  explicit OnlineRefit(perf::FittedModel model, OnlineRefitOptions options = {});

  const perf::FittedModel& model() const { return model_; }
  int measurements() const { return static_cast<int>(measured_.size()); }
  int refits() const { return refits_; }  // successful Refit calls

  // model() with the measurements appended to its fit points (once each), for saving across a
  // requeue (refit_store.h): a refit after the restart starts from everything measured so far.
  perf::FittedModel ModelWithMeasurements() const;

  // Records that `plan` ran on `allocation` at `samples_per_s`; a later measurement of the same
  // plan on the same allocation replaces it. Returns why it cannot be used, or nullopt. Usable
  // only when every rank hosts the same number of ESTs (W divides E, or pp): otherwise the agent's
  // prediction is for a batch other than the job's (plan_selection.h), which fitted points cannot
  // express.
  std::optional<std::string> AddMeasurement(const PlanRequest& request,
                                            const NodeAllocation& allocation,
                                            const perf::ExecutionPlan& plan, double samples_per_s);

  // Fits the parameters again on the profile's points and the measurements (a model without a
  // profile: calibrated, then partly fitted, as above). On success model() has the new
  // parameters. Returns a one-line note either way (RMSLE before and after, or why not: nothing
  // measured yet, or the fitter failed).
  std::string Refit();

  // Whether refits calibrate the compute speed: the model came without any fit point (a built-in
  // or bootstrapped description, whose forward time is assumed).
  bool calibrates() const { return calibrates_; }

 private:
  std::vector<perf::ProfiledPoint> WeightedPoints() const;
  std::string Calibrate(std::vector<perf::ProfiledPoint>& points);
  perf::FitOptions FitOptionsFor(const std::vector<perf::ProfiledPoint>& points,
                                 int distinct) const;

  perf::FittedModel model_;
  OnlineRefitOptions options_;
  perf::ModelDesc fit_model_;  // model_.model with the forward time carried by each point
  std::vector<perf::ProfiledPoint> measured_;
  int refits_ = 0;
  bool calibrates_ = false;
};

}  // namespace elastic::agent
