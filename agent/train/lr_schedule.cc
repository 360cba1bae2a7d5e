// LearningRateAt: warmup, then constant or a half cosine (see lr_schedule.h).
#include "agent/train/lr_schedule.h"

#include <cmath>
#include <numbers>

namespace elastic::agent {

double LearningRateAt(const JobConfig::Train& train, std::int64_t step) {
  if (step < train.warmup_steps) {
    return train.lr * static_cast<double>(step + 1) / static_cast<double>(train.warmup_steps);
  }
  if (train.lr_schedule == LrSchedule::kConstant) return train.lr;
  const double span = static_cast<double>(train.steps - train.warmup_steps);
  const double progress = static_cast<double>(step - train.warmup_steps) / span;
  return train.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace elastic::agent
