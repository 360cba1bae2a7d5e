// The learning rate of each step (agent/train/lr_schedule.h): warmup, constant and cosine.
#include "agent/train/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace elastic::agent {
namespace {

JobConfig::Train Train(LrSchedule schedule, std::int64_t warmup, std::int64_t steps) {
  JobConfig::Train train;
  train.lr = 0.4;
  train.lr_schedule = schedule;
  train.warmup_steps = warmup;
  train.steps = steps;
  return train;
}

TEST(LearningRateAt, ConstantIsTheRateAtEveryStep) {
  const JobConfig::Train train = Train(LrSchedule::kConstant, 0, 10);
  for (std::int64_t step : {0, 5, 9}) EXPECT_EQ(LearningRateAt(train, step), 0.4) << step;
}

TEST(LearningRateAt, WarmupRisesLinearlyToTheRate) {
  const JobConfig::Train train = Train(LrSchedule::kConstant, 4, 10);
  EXPECT_DOUBLE_EQ(LearningRateAt(train, 0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRateAt(train, 1), 0.2);
  EXPECT_DOUBLE_EQ(LearningRateAt(train, 3), 0.4);
  EXPECT_EQ(LearningRateAt(train, 4), 0.4);
}

TEST(LearningRateAt, CosineFallsFromTheRateAfterWarmupAsDocumented) {
  const JobConfig::Train train = Train(LrSchedule::kCosine, 2, 10);
  EXPECT_DOUBLE_EQ(LearningRateAt(train, 0), 0.2);  // warmup
  EXPECT_EQ(LearningRateAt(train, 2), 0.4);         // cos(0) = 1
  EXPECT_DOUBLE_EQ(LearningRateAt(train, 6), 0.2);  // half way: cos(pi / 2) = 0
  // Exactly the documented expression, evaluated as written.
  const double expected = 0.4 * 0.5 * (1.0 + std::cos(std::numbers::pi * ((9.0 - 2.0) / 8.0)));
  EXPECT_EQ(LearningRateAt(train, 9), expected);
  EXPECT_GT(LearningRateAt(train, 9), 0.0);
  for (std::int64_t step = 3; step < 10; ++step) {
    EXPECT_LT(LearningRateAt(train, step), LearningRateAt(train, step - 1)) << step;
  }
}

}  // namespace
}  // namespace elastic::agent
