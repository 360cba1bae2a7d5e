// Fits the 7 parameters of Rubick's performance model (Table 1) to profiled throughputs by
// minimising RMSLE (§4.3 "Continuous model fitting") with NLopt's bounded derivative-free BOBYQA
// from several deterministic starts. Pure math: no I/O, no clocks, no global state (NLopt's own
// RNG is not used); the same inputs give the same bits. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/result.h"
#include "perf/rubick/perf_model.h"
#include "perf/rubick/plan.h"

namespace elastic::perf {

// One profiled test run (§4.3 "data triples"): plan, resources, measured throughput.
struct ProfiledPoint {
  ExecutionPlan plan;
  Resources resources;
  double throughput = 0;  // samples/s
};

// The paper fits the 7-tuple from at least seven points, three of them ZeRO-Offload (§4.3).
inline constexpr int kMinFitPoints = 7;

struct ParamBounds {
  ParamVector lower{0.5, 1.0, 1e-14, 1e-13, 1.0, 1.0, 1e-9};
  ParamVector upper{8.0, 16.0, 1e-6, 1e-5, 16.0, 16.0, 100.0};
};

struct FitOptions {
  int starts = 24;         // local searches: `initial`, then seeded pseudo-random points
  std::uint64_t seed = 1;  // std::mt19937_64 seed for the starting points
  int max_evals_per_start = 4000;
  double log_offset = 1.0;  // RMSLE's "+1": sqrt(mean((ln(o + y') - ln(o + y))^2))
  ParamBounds bounds;
  PerfParams initial;  // first start, and the value of every parameter held fixed
  // Parameters to fit; a fixed one keeps `initial`'s value (e.g. the offload parameters when no
  // ZeRO-Offload run could be profiled).
  std::array<bool, kNumPerfParams> free{true, true, true, true, true, true, true};
  // Fewer points than the paper's 7 suffice when fewer parameters are free: the online refit of a
  // job without a profile fits one more parameter per measured generation (online_refit.h).
  int min_points = kMinFitPoints;
};

struct FitResult {
  PerfParams params;
  double rmsle = 0;     // at `params`
  int evaluations = 0;  // objective evaluations over all starts
  int best_start = 0;   // which start found `params`
};

// RMSLE of the model's throughput predictions against the points (invalid plans count as a
// prediction of 0).
double Rmsle(const ModelDesc& model, std::span<const ProfiledPoint> points,
             const PerfParams& params, double log_offset = 1.0);

// Fails (saying why) with fewer than options.min_points points (default kMinFitPoints), a point whose plan is invalid or whose
// throughput is not positive, bad bounds, or when NLopt fails from every start.
Result<FitResult> FitPerfParams(const ModelDesc& model, std::span<const ProfiledPoint> points,
                                const FitOptions& options = {});

}  // namespace elastic::perf
