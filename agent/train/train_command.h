// `elastic-agent train`: load the data, resume from the newest valid checkpoint, train up to the
// stop step taking checkpoints, report. Torch-free header so main.cc compiles quickly.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "agent/config/job_config.h"
#include "agent/common/first_step_marker.h"

namespace elastic::agent {

class Communicator;

struct TrainOptions {
  std::optional<std::int64_t> until_step;  // stop after this many steps; default train.steps
  // Prints progress and the final line and writes checkpoints; only ever honoured on world
  // rank 0 (other ranks are silent except for errors and never write).
  bool primary = true;
};

struct TrainOutcome {
  std::int64_t step = 0;  // completed steps
  double loss = 0;        // loss of the last step
  std::string params_sha256;
};

// Trains to the stop step (until_step, else train.steps), starting from the newest valid
// checkpoint in checkpoint.dir if there is one (else from step 0). When `options.primary`,
// writes to `out` a start line, a progress line every train.log_every steps
// (`step=<N> loss=<float> samples_per_s=<float>`, with ` probe_ms=<float>` appended under
// train.host_probe) and last the contract line
// `elastic-agent: step=<N> loss=<float> params_sha256=<64 hex>`; a run resumed at its stop step
// trains nothing and prints the same contract line again.
//
// Checkpoints (only when `options.primary` and checkpoint.dir is set; the two newest are kept):
// every checkpoint.every_steps steps, on a SIGUSR1 request, at the stop step, and on a SIGTERM
// request, after which training stops early (TakeCheckpointRequest, polled after each step).
// Notes go to `err` as one `elastic-agent: ...` line each: the checkpoint resumed from,
// corrupt checkpoints skipped, checkpoints taken on request, an early stop.
//
// Throws UsageError when until_step exceeds train.steps or is behind the checkpoint, ConfigError
// (also for a checkpoint of an incompatible config), DataError, TrainingError, CheckpointError
// (also when every checkpoint in checkpoint.dir is corrupt: it never silently starts over).
//
// Ranks: every rank of `world` calls it (collective). Each rank hosts its block of ESTs
// (est_placement.h), resumes from the newest valid checkpoint itself (checkpoint.dir must be
// the same shared directory for all) and checks that all resumed the same step; signals are
// agreed on after every step (AgreeOnCheckpointRequest), so all ranks checkpoint or stop at the
// same step; checkpoints gather every EST's context to rank 0, which alone writes.
TrainOutcome RunTrainCommand(const JobConfig& config, const TrainOptions& options,
                             Communicator& world, std::ostream& out, std::ostream& err);
// The same in a world of one rank.
TrainOutcome RunTrainCommand(const JobConfig& config, const TrainOptions& options,
                             std::ostream& out, std::ostream& err);

// The config a run on `world_size` ranks trains with. train.scaling = "est": `config` itself.
// "linear" (TorchElastic-style comparison mode, only for the consistency table in
// docs/consistency.md): the configured values are those of W = train.ests; on W ranks there are
// W workers (ests = W) with the configured per-EST batch, so global_batch = est_batch * W and,
// by the linear scaling rule, lr = lr * W / ests. Then W changes the results.
JobConfig ScaledForWorld(const JobConfig& config, int world_size);

// The contract line, exposed so tests parse exactly what is printed.
std::string FormatFinalLine(const TrainOutcome& outcome);

}  // namespace elastic::agent
