// JSON codec of the performance model's files (docs/perf-model.md "Profiling and fitting"):
// fitted.json (a FittedModel: model description, the 7 fitted parameters, measured bandwidths)
// and points.json (the profiled points `elastic-agent profile` measures and the fitter reads).
// Pure: strings in, structs out, no file I/O; thread-safe. Doubles round-trip bit-exactly.
// Errors: Result<T> whose error names the JSON path, the value and what was expected; unknown
// keys are errors (a typo never silently becomes a default).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "perf/rubick/fitter.h"
#include "perf/rubick/perf_model.h"
#include "perf/rubick/plan.h"

namespace elastic::perf {

inline constexpr std::string_view kFittedModelFormat = "elastic-perf-fitted/1";
inline constexpr std::string_view kProfiledPointsFormat = "elastic-perf-points/1";

// What `elastic-plan fit` produces and elasticd/the simulator read: everything needed to predict
// a job's throughput for any plan and allocation with PredictIteration.
struct FittedModel {
  std::string model_name;  // the job config's model.name, e.g. "fmnist_cnn"
  ModelDesc model;
  PerfParams params;
  // Measured bandwidths (bytes/s) of the machine(s) profiled; copy them into Resources.
  double b_intra = 0, b_inter = 0, b_pcie = 0;
  // The reference worker's fixed seconds per forward pass and its backward pass (Resources'
  // fields, measured with model.fwd_s_per_sample): optional in the file (0 and unset).
  double fwd_s_per_pass = 0;
  std::optional<PassTime> backward;
  int points = 0;    // profiled points the fit used
  double rmsle = 0;  // of the fit on those points
  // Those points themselves (optional in the file): the online refit (Rubick §4.3) fits them
  // again together with the job's own measurements.
  std::vector<ProfiledPoint> fit_points;
};

std::string FittedModelToJson(const FittedModel& fitted);
// Required: format, model_name, model.params, model.global_batch, every k_* in params, b_intra,
// b_inter, b_pcie; the other ModelDesc fields default to ModelDesc's, points and rmsle to 0.
Result<FittedModel> FittedModelFromJson(std::string_view text);

// One measured configuration of points.json: the fitter's ProfiledPoint plus what was run.
struct ProfiledRun {
  std::string label;       // unique within the file, e.g. "w2-t1-zero-offload-c2"
  ProfiledPoint point;     // plan, resources (with the measured bandwidths), samples/s
  int intra_threads = 1;   // LibTorch intra-op threads per worker (train.threads)
  int measured_steps = 0;  // steps the median is over (warm-up excluded)
  double median_step_s = 0;
};

// points.json: the model profiled and every measured configuration.
struct ProfiledPoints {
  std::string model_name;
  ModelDesc model;
  double b_intra = 0, b_inter = 0, b_pcie = 0;  // measured, bytes/s
  std::vector<ProfiledRun> runs;
};

std::string ProfiledPointsToJson(const ProfiledPoints& points);
// Every field the writer writes is required; labels must be unique, throughputs positive.
Result<ProfiledPoints> ProfiledPointsFromJson(std::string_view text);

}  // namespace elastic::perf
