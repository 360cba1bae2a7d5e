// From what a profile measured over its rounds to one throughput per run and one forward rate per
// thread count: the plain estimate (median per round, then over the rounds) and the one at the
// host's quiet speed (every measurement scaled by its probe time, host_speed.h), and the noise
// line that says how far the rounds lie apart under each. Pure and torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "agent/profile/host_speed.h"
#include "perf/rubick/perf_model.h"

namespace elastic::agent {

// Everything measured, each value with the probe time taken just before it (0 without probe).
struct RoundMeasurements {
  std::vector<std::string> labels;                      // per run
  std::vector<int> threads;                             // per run: its intra-op threads
  std::vector<std::vector<std::vector<Probed>>> steps;  // [run][round]: samples/s per step
  // Intra-op threads -> [round]: seconds per sample of each forward pass of forward_batch samples.
  std::map<int, std::vector<std::vector<Probed>>> forward;
  // The same at forward_small_batch samples (fewer): with `forward` they split a pass's time into
  // a fixed part and a part per sample (SplitPassTime). Empty: not measured, so the forward
  // time is all per sample.
  std::map<int, std::vector<std::vector<Probed>>> forward_small;
  // The backward pass after each of those forward passes, alike: split the same way into the
  // backward's own fixed part. Empty: not measured (k_bwd then scales the forward's).
  std::map<int, std::vector<std::vector<Probed>>> backward;
  std::map<int, std::vector<std::vector<Probed>>> backward_small;
  std::int64_t forward_batch = 0;
  std::int64_t forward_small_batch = 0;
};

struct Estimates {
  std::vector<double> rate;  // per run: training samples/s
  // Intra-op threads -> one worker's forward samples/s, beyond the fixed part of a pass.
  std::map<int, double> forward_rate;
  std::map<int, double> forward_pass_s;  // intra-op threads -> fixed seconds per pass (or 0)
  // Intra-op threads -> the backward pass split the same way; only where it was measured.
  std::map<int, perf::PassTime> backward;
};

// The line through the times of a pass of `large` and of `small` samples (given per sample).
// Where that line has a negative fixed part, the pass is all per sample: {the large pass's, 0}.
// Where the small pass costs as much as the large one or more (a GPU pass of a small model is all
// kernel launches), the pass is all fixed but for kMinPerSampleShare of the large pass's time.
inline constexpr double kMinPerSampleShare = 0.01;
// REQUIRES: large > small > 0, both times positive.
perf::PassTime SplitPassTime(double s_per_sample_large, std::int64_t large,
                             double s_per_sample_small, std::int64_t small);

// How the measurements are brought to the quiet host. The step rates share one slope (fitted
// within every run); a probe's quiet time depends on how many threads it runs on, so it is taken
// per thread count over every run with that count. The forward passes, timed in the profiling
// process, get their own slope and quiet time per thread count.
struct HostScaling {
  double step_slope = 0;
  std::map<int, double> step_quiet_ms;  // intra-op threads -> the probe's quiet time
  std::map<int, double> forward_slope;
  std::map<int, double> forward_quiet_ms;
};

// REQUIRES: every probe time positive.
HostScaling FitHostScaling(const RoundMeasurements& measured);

// Median of each round, then the median over the rounds. REQUIRES: every round non-empty.
Estimates PlainEstimates(const RoundMeasurements& measured);

// The median over all rounds of the measurements scaled to the quiet host.
Estimates QuietHostEstimates(const RoundMeasurements& measured, const HostScaling& scaling);

// How far each configuration's per-round medians lie apart, (max - min) / median: one line for
// the plain values and, with `scaling`, one for the scaled ones with the fitted slopes and quiet
// probe times. REQUIRES: at least one run.
void PrintRoundNoise(const RoundMeasurements& measured, const HostScaling* scaling,
                     std::ostream& out);

}  // namespace elastic::agent
