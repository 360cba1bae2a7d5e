// Tests for the trainer's consistency machinery on a small synthetic dataset: same seed gives the
// same bits, a different seed different bits, EST RNG streams, the EST-ordered gradient mean, and
// the params_sha256 definition.
#include "agent/train/trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "agent/common/errors.h"
#include "agent/common/sha256.h"
#include "agent/train/est_context.h"
#include "agent/train/gradient_stash.h"
#include "agent/train/params_digest.h"
#include "scheduler/common/toml_reader.h"

namespace elastic::agent {
namespace {

// 256 random images whose label is a fixed function of the pixels, so there is signal to learn.
Dataset SyntheticData() {
  torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(99);
  torch::Tensor images = torch::randn({256, 1, 28, 28}, generator);
  torch::Tensor labels = images.sum({1, 2, 3}).gt(0).to(torch::kInt64) * 3;
  return Dataset{images, labels};
}

JobConfig SmallConfig(std::int64_t seed) {
  JobConfig config;
  config.train.ests = 4;
  config.train.global_batch = 32;
  config.train.seed = seed;
  config.train.steps = 10;
  return config;
}

std::string TrainedSha(const JobConfig& config, int steps) {
  Trainer trainer(config, SyntheticData());
  for (int i = 0; i < steps; ++i) trainer.RunStep();
  EXPECT_EQ(trainer.completed_steps(), steps);
  return trainer.ParamsSha256();
}

TEST(Trainer, SameSeedSameBitsDifferentSeedDifferentBits) {
  std::string first = TrainedSha(SmallConfig(1), 5);
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(TrainedSha(SmallConfig(1), 5), first);
  EXPECT_NE(TrainedSha(SmallConfig(2), 5), first);
  EXPECT_NE(TrainedSha(SmallConfig(1), 4), first);
}

TEST(Trainer, LossFallsOnLearnableData) {
  JobConfig config = SmallConfig(1);
  Trainer trainer(config, SyntheticData());
  double first = trainer.RunStep();
  double last = first;
  for (int i = 0; i < 15; ++i) last = trainer.RunStep();
  EXPECT_LT(last, first);
}

TEST(Trainer, RejectsWhatItCannotRun) {
  JobConfig config = SmallConfig(1);
  config.train.plan = Plan::kPp;
  EXPECT_THROW(Trainer(config, SyntheticData()), ConfigError);
  config = SmallConfig(1);
  config.train.global_batch = 512;
  EXPECT_THROW(Trainer(config, SyntheticData()), ConfigError);
}

TEST(Trainer, DivergenceStopsWithATrainingError) {
  JobConfig config = SmallConfig(1);
  config.train.lr = 1e5;
  Trainer trainer(config, SyntheticData());
  EXPECT_THROW(
      {
        for (int i = 0; i < 50; ++i) trainer.RunStep();
      },
      TrainingError);
}

TEST(EstContext, EachEstOwnsItsStream) {
  EstContext a = MakeEstContext(1, 0);
  EstContext b = MakeEstContext(1, 1);
  EXPECT_NE(EstSeed(1, 0), EstSeed(1, 1));
  EXPECT_NE(EstSeed(1, 0), EstSeed(2, 0));

  torch::manual_seed(123);
  torch::Tensor default_before = torch::rand({4});
  torch::manual_seed(123);

  torch::Tensor a1, b1, a2;
  {
    EstRngScope scope(a);
    a1 = torch::rand({4});
  }
  {
    EstRngScope scope(b);
    b1 = torch::rand({4});
  }
  {
    EstRngScope scope(a);
    a2 = torch::rand({4});
  }
  // The default stream was not advanced by the ESTs' draws.
  EXPECT_TRUE(torch::equal(torch::rand({4}), default_before));

  // A's two turns continue one stream, unaffected by B's turn in between.
  torch::Generator reference = at::make_generator<at::CPUGeneratorImpl>(EstSeed(1, 0));
  EXPECT_TRUE(torch::equal(a1, torch::rand({4}, reference)));
  EXPECT_TRUE(torch::equal(a2, torch::rand({4}, reference)));
  EXPECT_FALSE(torch::equal(a1, b1));
}

TEST(GradientStash, MeanOverEstsInIdOrder) {
  torch::Tensor w = torch::zeros({2}, torch::requires_grad());
  torch::Tensor b = torch::zeros({1}, torch::requires_grad());
  GradientStash stash({w, b}, 3);
  const std::vector<std::vector<float>> grads = {{1, 2, 3}, {4, 5, 6}, {7, 8, 0.5}};
  for (std::int64_t est = 0; est < 3; ++est) {
    w.mutable_grad() = torch::tensor({grads[est][0], grads[est][1]});
    b.mutable_grad() = torch::tensor({grads[est][2]});
    stash.Capture(est);
  }
  stash.ReduceMeanIntoGradients();
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({4.0f, 5.0f})));
  EXPECT_TRUE(torch::equal(b.grad(), torch::tensor({((3.0f + 6.0f) + 0.5f) / 3.0f})));
  // A reduction without every EST's gradient is a bug, not a silent partial mean.
  EXPECT_THROW(stash.ReduceMeanIntoGradients(), std::runtime_error);
}

struct TwoParams : torch::nn::Module {
  TwoParams() {
    first = register_parameter("first", torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({2, 2}));
    second = register_parameter("second", torch::tensor({-0.5f}));
    register_buffer("ignored", torch::tensor({9.0f}));
  }
  torch::Tensor first, second;
};

TEST(ParamsSha256, HashesFloatBytesInParameterOrder) {
  TwoParams module;
  const float values[] = {1.0f, 2.0f, 3.0f, 4.0f, -0.5f};
  Sha256 expected;
  expected.Update(values, sizeof values);
  EXPECT_EQ(ParamsSha256(module), expected.HexDigest());
  // Non-contiguous storage hashes the same values the same way.
  module.first.set_data(torch::tensor({1.0f, 3.0f, 2.0f, 4.0f}).view({2, 2}).t());
  Sha256 again;
  again.Update(values, sizeof values);
  EXPECT_EQ(ParamsSha256(module), again.HexDigest());
}

}  // namespace
}  // namespace elastic::agent
