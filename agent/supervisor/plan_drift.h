// Online-refit watch for the supervisor (Rubick §4.3: the model is "updated online ... when the
// prediction error exceeds a threshold"): the step's measured throughput (rank 0's progress
// lines) against the prediction the running plan was chosen with, through perf::DriftDetector.
// It only says when a refit is due; refitting (elastic-plan fit with the new points) is not
// automated. Pure; not thread-safe (one per supervisor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/perf/drift.h"

namespace elastic::agent {

// samples_per_s of an agent progress line "step=<N> loss=<x> samples_per_s=<y>"; nullopt for
// any other line.
std::optional<double> ParseProgressThroughput(std::string_view line);

class PlanDriftWatch {
 public:
  explicit PlanDriftWatch(perf::DriftOptions options = {}) : detector_(options) {}

  // A new step started with this prediction (0 = none: its lines are not compared). The first
  // progress line of each step is skipped: it includes start-up and checkpoint loading.
  void StartGeneration(std::uint64_t generation, double predicted_samples_per_s);
  // One line of the step's output. Returns a note, once per trigger, when the drift over the
  // window passes the threshold; the window then starts over.
  std::optional<std::string> OnLine(std::string_view line);

 private:
  perf::DriftDetector detector_;
  std::uint64_t generation_ = 0;
  double predicted_ = 0.0;
  bool skipped_first_ = false;
};

}  // namespace elastic::agent
