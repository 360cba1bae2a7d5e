// RunTrainCommand: the step loop with progress reporting.
#include "agent/train/train_command.h"

#include <chrono>
#include <cstdio>
#include <ostream>

#include "agent/common/errors.h"
#include "agent/train/trainer.h"

namespace elastic::agent {
namespace {

using Clock = std::chrono::steady_clock;

std::string FormatLoss(double loss) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", loss);
  return text;
}

// Throughput since the previous progress line, so the number tracks the current speed.
class ProgressMeter {
 public:
  explicit ProgressMeter(std::int64_t global_batch) : global_batch_(global_batch) {}

  void Print(std::ostream& out, std::int64_t step, double loss) {
    Clock::time_point now = Clock::now();
    double seconds = std::chrono::duration<double>(now - since_).count();
    double rate =
        seconds > 0 ? static_cast<double>((step - since_step_) * global_batch_) / seconds : 0.0;
    char text[128];
    std::snprintf(text, sizeof text, "step=%lld loss=%s samples_per_s=%.1f",
                  static_cast<long long>(step), FormatLoss(loss).c_str(), rate);
    out << text << std::endl;  // flush: Slurm output files should show progress as it happens
    since_ = now;
    since_step_ = step;
  }

 private:
  std::int64_t global_batch_;
  Clock::time_point since_ = Clock::now();
  std::int64_t since_step_ = 0;
};

std::int64_t StopStep(const JobConfig& config, const TrainOptions& options) {
  if (!options.until_step) return config.train.steps;
  if (*options.until_step > config.train.steps) {
    throw UsageError("--until-step " + std::to_string(*options.until_step) +
                     ": beyond train.steps = " + std::to_string(config.train.steps));
  }
  return *options.until_step;
}

}  // namespace

std::string FormatFinalLine(const TrainOutcome& outcome) {
  return "elastic-agent: step=" + std::to_string(outcome.step) +
         " loss=" + FormatLoss(outcome.loss) + " params_sha256=" + outcome.params_sha256;
}

TrainOutcome RunTrainCommand(const JobConfig& config, const TrainOptions& options,
                             std::ostream& out) {
  const std::int64_t stop = StopStep(config, options);
  Dataset data = LoadFashionMnist(config.data.path, Split::kTrain);
  const std::int64_t samples = data.size();
  Trainer trainer(config, std::move(data));
  if (options.primary) {
    out << "elastic-agent: training " << config.model.name << " on " << samples
        << " samples: ests=" << config.train.ests << " global_batch=" << config.train.global_batch
        << " threads=" << config.train.threads << " steps=" << stop << std::endl;
  }

  TrainOutcome outcome;
  ProgressMeter meter(config.train.global_batch);
  while (trainer.completed_steps() < stop) {
    outcome.loss = trainer.RunStep();
    const std::int64_t step = trainer.completed_steps();
    if (options.primary && config.train.log_every > 0 && step % config.train.log_every == 0) {
      meter.Print(out, step, outcome.loss);
    }
  }
  outcome.step = trainer.completed_steps();
  outcome.params_sha256 = trainer.ParamsSha256();
  if (options.primary) out << FormatFinalLine(outcome) << std::endl;
  return outcome;
}

}  // namespace elastic::agent
