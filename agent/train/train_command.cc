// RunTrainCommand: resume, the step loop with progress reporting, and when to checkpoint.
#include "agent/train/train_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>

#include "agent/checkpoint/checkpoint_dir.h"
#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/checkpoint/checkpoint_writer.h"
#include "agent/comm/communicator.h"
#include "agent/common/errors.h"
#include "agent/data/char_dataset.h"
#include "agent/model/registry.h"
#include "agent/multiplex/idle_filler.h"
#include "agent/plan/execution_plan.h"
#include "agent/train/background_job.h"
#include "agent/train/checkpoint_signals.h"
#include "agent/train/host_probe.h"
#include "agent/train/step_watchdog.h"
#include "agent/train/trainer.h"
#include "perf/rubick/plan_drift.h"

namespace elastic::agent {
namespace {

using Clock = std::chrono::steady_clock;

std::string FormatLoss(double loss) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", loss);
  return text;
}

// Throughput since the previous progress line, so the number tracks the current speed. Time the
// host probe spent is left out (Exclude), and the line names the slowest probe since the last.
class ProgressMeter {
 public:
  // `first_step`: the step training starts from (a resumed run's checkpoint step).
  ProgressMeter(std::int64_t global_batch, std::int64_t first_step)
      : global_batch_(global_batch), since_step_(first_step) {}

  // The host probe ran for `elapsed` (not training) and measured `probe_ms`.
  void Exclude(Clock::duration elapsed, double probe_ms) {
    excluded_ += elapsed;
    probe_ms_ = std::max(probe_ms_, probe_ms);
  }

  void Print(std::ostream& out, std::int64_t step, double loss) {
    Clock::time_point now = Clock::now();
    double seconds = std::chrono::duration<double>(now - since_ - excluded_).count();
    double rate =
        seconds > 0 ? static_cast<double>((step - since_step_) * global_batch_) / seconds : 0.0;
    char text[160];
    int length = std::snprintf(text, sizeof text, "step=%lld loss=%s samples_per_s=%.1f",
                               static_cast<long long>(step), FormatLoss(loss).c_str(), rate);
    if (probe_ms_ > 0) {
      std::snprintf(text + length, sizeof text - length, " probe_ms=%.3f", probe_ms_);
    }
    out << text << std::endl;  // flush: Slurm output files should show progress as it happens
    since_ = now;
    since_step_ = step;
    excluded_ = Clock::duration::zero();
    probe_ms_ = 0;
  }

 private:
  std::int64_t global_batch_;
  Clock::time_point since_ = Clock::now();
  std::int64_t since_step_;
  Clock::duration excluded_ = Clock::duration::zero();
  double probe_ms_ = 0;
};

std::int64_t StopStep(const JobConfig& config, const TrainOptions& options) {
  if (!options.until_step) return config.train.steps;
  if (*options.until_step > config.train.steps) {
    throw UsageError("--until-step " + std::to_string(*options.until_step) +
                     ": beyond train.steps = " + std::to_string(config.train.steps));
  }
  return *options.until_step;
}

// How many checkpoints stay in checkpoint.dir: the newest, and one to fall back to if the newest
// turns out corrupt.
constexpr int kCheckpointsKept = 2;

// Resumes `trainer` from the newest valid checkpoint in checkpoint.dir; returns its step, or
// nothing for a fresh start (no dir configured, none written yet).
std::optional<std::int64_t> Resume(const JobConfig& config, Trainer& trainer, std::ostream& err) {
  if (config.checkpoint.dir.empty()) return std::nullopt;
  bool warned = false;
  std::optional<CheckpointReader> checkpoint =
      FindNewestValid(config.checkpoint.dir, [&](const std::string& message) {
        // One insertion per line: stderr is unbuffered and shared with other ranks' output.
        err << "elastic-agent: warning: " + message + "\n" << std::flush;
        warned = true;
      });
  if (!checkpoint) {
    if (!warned) return std::nullopt;
    throw CheckpointError(config.checkpoint.dir,
                          "no valid checkpoint to resume from (see the warnings above); not "
                          "starting over from step 0: move the corrupt files away to do that");
  }
  trainer.RestoreState(*checkpoint);
  err << "elastic-agent: resuming from " + checkpoint->path().string() + " at step " +
             std::to_string(trainer.completed_steps()) + "\n"
      << std::flush;
  return trainer.completed_steps();
}

// Every rank must continue from the same step: a rank that saw another checkpoint (a
// checkpoint.dir that is not shared) would train on, silently, with other parameters.
void RequireSameResumeStep(Communicator& world, std::int64_t step) {
  const std::string mine = std::to_string(step);
  const std::string root = BroadcastText(world, mine);
  if (mine != root) {
    throw TrainingError("rank " + std::to_string(world.rank()) + " resumed at step " + mine +
                        " but rank 0 at step " + root +
                        ": checkpoint.dir must be one directory shared by all ranks");
  }
}

// Takes the checkpoints of one run, at most one per step. Collective: every rank calls Write at
// the same steps (they gather the EST contexts); only rank 0 of a primary run writes, and only
// with a checkpoint.dir.
class Checkpointer {
 public:
  Checkpointer(const JobConfig& config, Communicator& world, bool writes,
               std::optional<std::int64_t> resumed_step)
      : dir_(config.checkpoint.dir),
        world_(world),
        writes_(writes),
        last_step_(resumed_step.value_or(-1)) {}

  bool enabled() const { return !dir_.empty(); }
  bool writes() const { return enabled() && writes_; }

  // The path written (rank 0), or nothing when disabled, not the writer or this step is already
  // saved. A failed write (rank 0) throws CheckpointError on every rank alike, and the step
  // counts as unsaved, so the ranks stay in step for the next collective write.
  std::optional<std::filesystem::path> Write(Trainer& trainer) {
    if (!enabled() || trainer.completed_steps() == last_step_) return std::nullopt;
    std::optional<std::filesystem::path> path;
    std::string error;
    if (!writes_) {
      trainer.SaveState(nullptr);
    } else {
      try {
        CheckpointWriter writer(trainer.CheckpointFingerprint());
        trainer.SaveState(&writer);
        path = writer.Commit(dir_, static_cast<std::uint64_t>(trainer.completed_steps()));
        PruneOld(dir_, kCheckpointsKept);
      } catch (const CheckpointError& e) {
        error = e.what();
        if (error.empty()) error = "checkpoint: write failed";
      }
    }
    error = BroadcastText(world_, error);  // rank 0's outcome
    if (!error.empty()) throw CheckpointError(error.substr(error.find(' ') + 1));
    last_step_ = trainer.completed_steps();
    return path;
  }

 private:
  std::string dir_;
  Communicator& world_;
  bool writes_;
  std::int64_t last_step_;
};

// A periodic or on-demand (SIGUSR1) checkpoint that cannot be written (disk full, quota) does
// not end the run: the writer leaves no partial file, the newest valid checkpoint stays, and
// training goes on. Only a checkpoint the run stops at must succeed. Returns the path written.
std::optional<std::filesystem::path> WriteOrWarn(Checkpointer& checkpointer, Trainer& trainer,
                                                 std::ostream& err) {
  try {
    return checkpointer.Write(trainer);
  } catch (const CheckpointError& e) {
    err << "elastic-agent: warning: " + std::string(e.what()) +
               "; training on (the newest valid checkpoint is kept)\n"
        << std::flush;
    return std::nullopt;
  }
}

// Acts on the ranks' agreed request after a step (every rank, same step); returns true when
// training should stop. Notes go to `err` (a silent stream on ranks other than 0).
bool HandleRequest(CheckpointRequest request, Checkpointer& checkpointer, Trainer& trainer,
                   std::ostream& err) {
  if (request == CheckpointRequest::kNone) return false;
  const bool stop = request == CheckpointRequest::kCheckpointAndStop;
  const std::string step = std::to_string(trainer.completed_steps());
  std::optional<std::filesystem::path> path =
      stop ? checkpointer.Write(trainer) : WriteOrWarn(checkpointer, trainer, err);
  std::string note = std::string("elastic-agent: ") + (stop ? "SIGTERM/SIGUSR2" : "SIGUSR1") + ": ";
  if (!checkpointer.writes()) {
    note += "no checkpoint written (checkpoint.dir is not set or this is not rank 0)";
  } else if (path) {
    note += "wrote checkpoint " + path->string() + " after step " + step;
  } else {
    note += "checkpoint of step " + step + " already written";
  }
  note += stop ? "; stopping at step " + step : "; training on";
  err << note + "\n" << std::flush;  // one write: see the warning note above
  return stop;
}

double Seconds(multiplex::Duration duration) {
  return std::chrono::duration<double>(duration).count();
}

// The background job's result on this rank and how the idle slots were used (IdleFillerStats).
std::string FormatBackgroundLine(const BackgroundJob& job, int rank,
                                 const multiplex::IdleFillerStats& stats) {
  char times[160];
  std::snprintf(times, sizeof times, " waits=%llu filled_s=%.3f waited_s=%.3f overrun_s=%.3f",
                static_cast<unsigned long long>(stats.waits), Seconds(stats.background),
                Seconds(stats.waited), Seconds(stats.overrun));
  const Trainer& trainer = job.trainer();
  return "elastic-agent: background rank=" + std::to_string(rank) +
         " model=" + ModelLabel(job.config()) + " seed=" + std::to_string(job.config().train.seed) +
         " steps=" + std::to_string(trainer.completed_steps()) +
         " loss=" + FormatLoss(trainer.last_loss()) + " params_sha256=" + trainer.ParamsSha256() +
         times;
}

}  // namespace

JobConfig ScaledForWorld(const JobConfig& config, int world_size) {
  if (config.train.scaling != Scaling::kLinear) return config;
  JobConfig scaled = config;
  scaled.train.ests = world_size;
  scaled.train.global_batch = config.est_batch() * world_size;
  scaled.train.lr = config.train.lr * world_size / static_cast<double>(config.train.ests);
  return scaled;
}

std::string FormatFinalLine(const TrainOutcome& outcome) {
  return "elastic-agent: step=" + std::to_string(outcome.step) +
         " loss=" + FormatLoss(outcome.loss) + " params_sha256=" + outcome.params_sha256;
}

TrainOutcome RunTrainCommand(const JobConfig& config, const TrainOptions& options,
                             std::ostream& out, std::ostream& err) {
  std::unique_ptr<Communicator> world = MakeSingleProcessCommunicator();
  return RunTrainCommand(config, options, *world, out, err);
}

namespace {

// A background job trains only in the idle slots of a burst plan on several ranks; otherwise
// the config's background.config is noted and not run. Built before the foreground Trainer
// (background_job.h says why).
std::unique_ptr<BackgroundJob> MakeBackgroundJob(const JobConfig& config, int rank, int ranks,
                                                 std::ostream& notes) {
  if (!config.background.job) return nullptr;
  if (RunsBurstPlan(config, ranks)) {
    return std::make_unique<BackgroundJob>(*config.background.job, rank);
  }
  notes << "elastic-agent: background.config " << config.background.config
        << " not run: background jobs fill the idle slots of a burst plan on several ranks "
           "(train.plan = \"burst\")"
        << std::endl;
  return nullptr;
}

std::int64_t ParameterCount(const Model& model) {
  std::int64_t count = 0;
  for (const torch::Tensor& parameter : model.parameters()) count += parameter.numel();
  return count;
}

void PrintStartLine(const JobConfig& config, std::int64_t samples, int ranks,
                    const Trainer& trainer, std::int64_t stop, std::ostream& out) {
  const std::string model = config.model.torchscript.empty()
                                ? config.model.name
                                : "torchscript:" + config.model.torchscript;
  out << "elastic-agent: training " << model << " on " << samples
      << " samples: ests=" << config.train.ests << " ranks=" << ranks
      << " hosted=" << ToString(trainer.hosted()) << " global_batch=" << config.train.global_batch
      << " lr=" << config.train.lr << " scaling=" << ToString(config.train.scaling)
      << " threads=" << config.train.threads
      << " determinism=" << ToString(config.train.determinism) << " isa=" << CpuKernelIsa()
      << " device=" << ToString(config.train.device)
      << " plan=" << DescribeExecutionPlan(config, trainer.plan()) << " steps=" << stop
      << std::endl;
}

// Steps until `stop`, or until the ranks agree on a SIGTERM: progress lines (rank 0), the
// watchdog, the periodic and on-demand checkpoints.
void RunSteps(const JobConfig& config, std::int64_t stop, bool primary, Trainer& trainer,
              Communicator& world, Checkpointer& checkpointer, std::ostream& out,
              std::ostream& notes) {
  ProgressMeter meter(config.train.global_batch, trainer.completed_steps());
  bool first_step_reported = false;
  StepWatchdog watchdog(std::chrono::seconds(config.train.step_timeout_s));
  while (trainer.completed_steps() < stop) {
    if (config.train.host_probe) {
      const Clock::time_point probe_start = Clock::now();
      const double probe_ms =
          TimeHostProbeOnEveryRank(world, static_cast<int>(config.train.threads));
      meter.Exclude(Clock::now() - probe_start, probe_ms);
    }
    trainer.RunStep();
    watchdog.Beat();
    const std::int64_t step = trainer.completed_steps();
    // The supervisor measures a resize's pause up to this line (order -> first step done).
    if (primary && !first_step_reported) {
      out << kFirstStepMarker << step << std::endl;
      first_step_reported = true;
    }
    if (primary && config.train.log_every > 0 && step % config.train.log_every == 0) {
      meter.Print(out, step, trainer.last_loss());
    }
    const CheckpointRequest request = AgreeOnCheckpointRequest(world, TakeCheckpointRequest());
    if (HandleRequest(request, checkpointer, trainer, notes)) break;
    const std::int64_t every = config.checkpoint.every_steps;
    if (every > 0 && step % every == 0) WriteOrWarn(checkpointer, trainer, notes);
    watchdog.Beat();  // a checkpoint write is progress too
  }
}

}  // namespace

TrainOutcome RunTrainCommand(const JobConfig& configured, const TrainOptions& options,
                             Communicator& world, std::ostream& out, std::ostream& err) {
  const JobConfig config = ScaledForWorld(configured, world.size());
  const bool primary = options.primary && world.rank() == 0;
  std::ostream silent(nullptr);  // discards: notes come from rank 0 only
  std::ostream& notes = primary ? err : silent;
  const std::int64_t stop = StopStep(config, options);
  std::unique_ptr<BackgroundJob> background =
      MakeBackgroundJob(config, world.rank(), world.size(), notes);
  Dataset data = LoadTrainingSet(config);
  const std::int64_t samples = data.size();
  Trainer trainer(config, std::move(data), world);
  const multiplex::SteadyClock clock;
  std::optional<multiplex::IdleFiller> filler;
  if (background) {
    filler.emplace(*background, clock);
    trainer.SetIdleFiller(&*filler);
  }
  const std::optional<std::int64_t> resumed = Resume(config, trainer, notes);
  RequireSameResumeStep(world, trainer.completed_steps());
  if (resumed && *resumed > stop) {
    const std::string limit = options.until_step ? "--until-step " : "train.steps = ";
    throw UsageError(limit + std::to_string(stop) + ": the checkpoint in " + config.checkpoint.dir +
                     " is already at step " + std::to_string(*resumed));
  }
  Checkpointer checkpointer(config, world, primary, resumed);
  if (primary) {
    PrintStartLine(config, samples, world.size(), trainer, stop, out);
    out << FormatModelSizeLine(ParameterCount(trainer.model()), trainer.model().BlockCount())
        << std::endl;  // the supervisor's bootstrap model (perf/rubick/plan_drift.h)
  }

  RunSteps(config, stop, primary, trainer, world, checkpointer, out, notes);
  checkpointer.Write(trainer);  // the stop step (or the step a SIGTERM stopped at)
  TrainOutcome outcome;
  outcome.loss = trainer.last_loss();
  outcome.step = trainer.completed_steps();
  outcome.params_sha256 = trainer.ParamsSha256();
  // Every rank trains its own background job; before the collective below, so that the
  // contract line stays rank 0's last.
  if (background) {
    out << FormatBackgroundLine(*background, world.rank(), filler->stats()) << std::endl;
  }
  // Parameters only: buffers are per EST, so each rank holds its first hosted EST's.
  const std::string replica = trainer.ReplicaSha256();
  if (BroadcastText(world, replica) != replica) {
    throw TrainingError("rank " + std::to_string(world.rank()) + ": final parameters (sha256 " +
                        replica + ") differ from rank 0's: the replicas diverged");
  }
  if (primary) out << FormatFinalLine(outcome) << std::endl;
  return outcome;
}

}  // namespace elastic::agent
