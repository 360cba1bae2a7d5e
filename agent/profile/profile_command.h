// `elastic-agent profile --config F [--out DIR]`: runs each sampled configuration of the profile
// file for real (mpirun -np W elastic-agent train), measures the model's forward time per
// sample and the machine's bandwidths, and writes DIR/points.json and DIR/points.csv for
// `elastic-plan fit` (docs/perf-model.md "Profiling and fitting on a cluster"); with the host
// probe (the default) the rates are scaled to the host's quiet speed and the unscaled medians
// go to DIR/points.plain.json.
// Errors: ConfigError for a bad profile or job file or a run the performance model cannot
// describe (all checked before anything runs); TrainingError for a run that fails.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "agent/comm/communicator.h"
#include "perf/rubick/perf_json.h"

namespace elastic::agent {

struct ProfileOptions {
  std::string config_path;  // the profile file
  std::string out_dir;      // created if missing
  std::string agent_path;   // this elastic-agent binary, which the runs start
};

// Prints one line per measurement to `out`; returns what it wrote to points.json.
perf::ProfiledPoints RunProfileCommand(const ProfileOptions& options, std::ostream& out);

// `elastic-agent profile-bandwidth --bytes N --reps R` (started by RunProfileCommand under
// `mpirun -np 2`): rank 0 prints `elastic-agent: bandwidth bytes=<N> bytes_per_s=<B>`.
void RunProfileBandwidth(Communicator& world, std::size_t bytes, int reps, std::ostream& out);

// The bytes_per_s of that line in `output`, or a TrainingError quoting `output`'s end.
double ParseBandwidthLine(const std::string& output);

}  // namespace elastic::agent
