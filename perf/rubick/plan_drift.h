// Online-refit watch for the supervisor (Rubick §4.3: the model is "updated online ... when the
// prediction error exceeds a threshold"): the step's measured throughput (rank 0's progress
// lines) against the prediction the running plan was chosen with, through perf::DriftDetector.
// It says when a refit is due and what the step measured; the supervisor refits
// (online_refit.h). Pure; not thread-safe (one per supervisor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "perf/rubick/drift.h"

namespace elastic::agent {

// samples_per_s of an agent progress line "step=<N> loss=<x> samples_per_s=<y>"; nullopt for
// any other line.
std::optional<double> ParseProgressThroughput(std::string_view line);

// A refit is due: the drift over the window passed the threshold.
struct DriftTrigger {
  double predicted = 0.0;  // samples/s the running plan was chosen with
  double measured = 0.0;   // the window's geometric-mean measurement: predicted * (1 + drift)
  double drift = 0.0;
  std::string note;        // one line for the log
};

class PlanDriftWatch {
 public:
  explicit PlanDriftWatch(perf::DriftOptions options = {}) : detector_(options) {}

  // A new step started with this prediction (0 = none: its lines are not compared). The first
  // progress line of each step is skipped: it includes start-up and checkpoint loading.
  void StartGeneration(std::uint64_t generation, double predicted_samples_per_s);
  // One line of the step's output. Returns a trigger, once, when the drift over the window
  // passes the threshold; the window then starts over.
  std::optional<DriftTrigger> OnLine(std::string_view line);

 private:
  perf::DriftDetector detector_;
  std::uint64_t generation_ = 0;
  double predicted_ = 0.0;
  bool skipped_first_ = false;
};

}  // namespace elastic::agent
