// The learning rate of each step (train.lr_schedule, train.warmup_steps): a pure function of the
// step, so every rank, plan, resize history and resume computes the same value for it.
#pragma once

#include <cstdint>

#include "agent/config/job_config.h"

namespace elastic::agent {

// The rate for step `step` (0-based: the step being taken) of a job of train.steps steps:
// during warmup lr * (step + 1) / warmup_steps; then "constant": lr; "cosine":
// lr * 0.5 * (1 + cos(pi * ((step - warmup_steps) / (steps - warmup_steps)))). Python gives the
// same doubles for the formula as written, with math.pi and math.cos (the C library's cos).
double LearningRateAt(const JobConfig::Train& train, std::int64_t step);

}  // namespace elastic::agent
