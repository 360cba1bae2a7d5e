// Online-refit watch for the supervisor (Rubick §4.3: the model is "updated online ... when the
// prediction error exceeds a threshold"): the step's measured throughput (rank 0's progress
// lines) against the prediction the running plan was chosen with. Each generation's first
// `window` reports give its fit point, with its error against the prediction; after that, every
// `window` reports the generation's running geometric mean is measured again when it is past
// `threshold` from the prediction and has also moved past `threshold` from the generation's last
// point (new information: a model that cannot fit a point is not refitted on it again and
// again). The running mean over the whole generation (not the
// last window alone) averages a shared host's swings of ±20 % between windows out. The supervisor refits (online_refit.h). Pure; not thread-safe (one per
// supervisor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string>
#include <string_view>


namespace elastic::agent {

struct DriftOptions {
  double threshold = 0.10;  // |relative drift| that triggers a refit (Rubick Table 2: errors
                            // of a good fit stay below ~10%)
  int window = 5;           // reports per measurement
};

// The agent's model-size line (rank 0, once per generation, before its first step), from which
// the supervisor bootstraps a performance model for a model nothing describes
// (default_perf_model.h): "elastic-agent: model params=<P> blocks=<B>".
std::string FormatModelSizeLine(std::int64_t params, std::int64_t blocks);
struct ModelSize {
  double params = 0;
  int blocks = 0;
};
// nullopt for any other line, or for a count that is not a positive integer.
std::optional<ModelSize> ParseModelSizeLine(std::string_view line);

// samples_per_s of an agent progress line "step=<N> loss=<x> samples_per_s=<y>"; nullopt for
// any other line.
std::optional<double> ParseProgressThroughput(std::string_view line);

// A measurement for the model: each generation's first window of reports (a fit point for the
// online refit, whatever the prediction), and later any window whose drift passed the threshold.
struct DriftTrigger {
  double predicted = 0.0;  // samples/s the running plan was chosen with (0 = none)
  double measured = 0.0;   // the window's geometric-mean measurement
  double drift = 0.0;      // measured / predicted - 1 (0 without a prediction)
  bool generation_point = false;  // the generation's first window
  bool past_threshold = false;    // |drift| over the window passed the refit threshold
  std::string note;        // one line for the log
};

class PlanDriftWatch {
 public:
  explicit PlanDriftWatch(DriftOptions options = {}) : options_(options) {}

  // A new step started with this prediction (0 = none: its lines are only measured). The first
  // progress line of each step is skipped: it includes start-up and checkpoint loading.
  void StartGeneration(std::uint64_t generation, double predicted_samples_per_s);
  // The running step's prediction after a refit: later windows compare against it (the
  // generation's first window is not measured again).
  void Repredict(double predicted_samples_per_s) { predicted_ = predicted_samples_per_s; }
  // One line of the step's output. Returns the generation point once the step's first `window`
  // reports are in, then a trigger whenever, at a multiple of `window` reports, the generation's
  // mean moved past the threshold from its last point.
  std::optional<DriftTrigger> OnLine(std::string_view line);

 private:
  std::optional<DriftTrigger> GenerationPoint(double measured, bool past_threshold) const;
  DriftTrigger DriftPastThreshold(double measured) const;

  DriftOptions options_;
  double log_sum_ = 0;  // ln(samples/s) summed over the generation's reports (first skipped)
  int reports_ = 0;
  double last_point_ = 0;  // the generation's last measurement returned (0 = none yet)
  std::uint64_t generation_ = 0;
  double predicted_ = 0.0;
  bool skipped_first_ = false;
};

}  // namespace elastic::agent
