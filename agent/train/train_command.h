// `elastic-agent train`: load the data, train up to the stop step, report. Torch-free header so
// main.cc compiles quickly.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "agent/config/job_config.h"

namespace elastic::agent {

struct TrainOptions {
  std::optional<std::int64_t> until_step;  // stop after this many steps; default train.steps
  bool primary = true;                     // rank 0: prints progress and the final line
};

struct TrainOutcome {
  std::int64_t step = 0;  // completed steps
  double loss = 0;        // loss of the last step
  std::string params_sha256;
};

// Trains from step 0 (checkpoint resume comes with checkpoints) to the stop step. When
// `options.primary`, writes to `out` a start line, a progress line every train.log_every steps
// (`step=<N> loss=<float> samples_per_s=<float>`) and last the contract line
// `elastic-agent: step=<N> loss=<float> params_sha256=<64 hex>`.
// Throws UsageError when until_step exceeds train.steps, ConfigError, DataError, TrainingError.
TrainOutcome RunTrainCommand(const JobConfig& config, const TrainOptions& options,
                             std::ostream& out);

// The contract line, exposed so tests parse exactly what is printed.
std::string FormatFinalLine(const TrainOutcome& outcome);

}  // namespace elastic::agent
