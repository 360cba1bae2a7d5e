// How the performance model describes a profiled run: the model (ModelDesc) from the real
// model's facts, each run's Resources from the measured rates and bandwidths, and the points.json
// rows from the estimates over the rounds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "agent/config/job_config.h"
#include "agent/profile/measure.h"
#include "agent/profile/profile_config.h"
#include "agent/profile/round_estimates.h"
#include "agent/profile/split_shares.h"
#include "perf/rubick/perf_json.h"
#include "perf/rubick/perf_model.h"

namespace elastic::agent {

// fp32 gradients and activations on the wire, momentum SGD's one fp32 buffer per parameter.
inline constexpr double kFloatBytes = 4;

// One run, resolved: what it trains with and how the performance model describes it.
struct PreparedRun {
  ProfileRun run;
  std::filesystem::path job_file;
  int threads = 1;
  std::int64_t ests = 1;
  perf::ExecutionPlan plan;
};

// The job's model as Rubick's model sees it, from the real model's facts (InspectModel) and how
// its passes split (MeasureSplitShares).
perf::ModelDesc DescribeModel(const JobConfig& job, const ModelFacts& facts,
                              const SplitShares& shares);

// `forward_rate` is one worker's forward samples/s with the machine to itself. A run whose ranks'
// intra-op threads outnumber the machine's cores time-shares them, so each worker computes at
// its share of the cores (a fact of the machine, not a fitted parameter): Rubick's model assumes
// a device per worker.
perf::Resources RunResources(const PreparedRun& prepared, double b_peer, double b_pcie,
                             double forward_rate, double forward_pass_s,
                             std::optional<perf::PassTime> backward, int cores);

// points.json's content from the estimates of the runs' rates and forward (and backward) passes:
// `points` with one run appended per `prepared` run, each described on this machine's cores.
perf::ProfiledPoints WithEstimates(perf::ProfiledPoints points, const ProfileConfig& config,
                                   const JobConfig& job, const std::vector<PreparedRun>& prepared,
                                   const Estimates& estimates);

}  // namespace elastic::agent
