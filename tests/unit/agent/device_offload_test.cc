// Tests for the pieces a GPU run adds, on this CPU-only build: where train.device puts a rank,
// and ZeRO-Offload's host update and transfer path run on CPU tensors (on a GPU:
// bench/gpu_check.sh).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "agent/plan/offload_mirror.h"
#include "agent/plan/parameter_shards.h"
#include "agent/plan/sgd_step.h"
#include "agent/est/device.h"
#include "agent/train/trainer.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// train.device = "cuda" where LibTorch sees no GPU (this build, or a GPU-less node) is refused
// before anything trains, with the fix in the message; "cpu" is the host. (On a CUDA machine:
// bench/gpu_check.sh.)
TEST(TrainingDevice, CpuIsTheHostAndCudaNeedsAVisibleGpu) {
  JobConfig config;
  EXPECT_TRUE(TrainingDevice(config).is_cpu());
  config.train.device = ComputeDevice::kCuda;
  auto no_env = [](std::string_view) { return std::optional<std::string>(); };
  if (torch::cuda::is_available()) {
    EXPECT_TRUE(TrainingDevice(config, no_env).is_cuda());
    return;
  }
  try {
    TrainingDevice(config, no_env);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.device: \"cuda\" but this process sees no CUDA "
                                         "device"),
              std::string::npos)
        << e.what();
  }
  const Dataset data{torch::zeros({256, 1, 28, 28}), torch::zeros({256}, torch::kInt64), nullptr};
  EXPECT_THROW(Trainer(config, data), ConfigError);
}

// ZeRO-Offload's host update of a GPU parameter (SgdUpdate on its master copy) is the same
// operations as the replicated SGD step on the parameter itself: equal bits over several steps.
TEST(SgdUpdate, OnPlainTensorsGivesSgdStepsBits) {
  torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(5);
  torch::Tensor param = torch::randn({7, 3}, generator).requires_grad_(true);
  torch::Tensor master = param.detach().clone();
  torch::Tensor param_momentum;
  torch::Tensor master_momentum;
  for (int step = 0; step < 3; ++step) {
    const torch::Tensor grad = torch::randn({7, 3}, generator);
    param.mutable_grad() = grad.clone();
    SgdStep(param, param_momentum, {0.05, 0.9, 0.0});
    SgdUpdate(master, grad, master_momentum, {0.05, 0.9, 0.0});
    ASSERT_TRUE(torch::equal(param.detach(), master)) << step;
    ASSERT_TRUE(torch::equal(param_momentum, master_momentum)) << step;
  }
  EXPECT_FALSE(torch::equal(param.detach(), torch::zeros({7, 3})));
}

// The sharded plans' own update with weight decay and a rate that changes every step (the
// trainer sets it from lr_schedule.h) gives LibTorch's SGD bits, which the replicated plans run.
TEST(SgdStep, WeightDecayAndAChangingRateGiveLibTorchSgdsBits) {
  torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(6);
  torch::Tensor param = torch::randn({5, 4}, generator).requires_grad_(true);
  torch::Tensor reference = param.detach().clone().requires_grad_(true);
  torch::optim::SGD sgd({reference},
                        torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(5e-4));
  torch::Tensor momentum;
  for (int step = 0; step < 4; ++step) {
    const torch::Tensor grad = torch::randn({5, 4}, generator);
    param.mutable_grad() = grad.clone();
    reference.mutable_grad() = grad.clone();
    SetLearningRate(sgd, 0.1 / (step + 1));
    sgd.step();
    const SgdHyper hyper = HyperOf(sgd);
    EXPECT_DOUBLE_EQ(hyper.lr, 0.1 / (step + 1));
    EXPECT_DOUBLE_EQ(hyper.weight_decay, 5e-4);
    SgdStep(param, momentum, hyper);
    ASSERT_TRUE(torch::equal(param.detach(), reference.detach())) << step;
  }
  // The decay is applied: without it the same gradients end elsewhere.
  torch::Tensor plain = reference.detach().clone().requires_grad_(true);
  torch::Tensor plain_momentum;
  plain.mutable_grad() = torch::ones({5, 4});
  SgdStep(plain, plain_momentum, {0.1, 0.9, 0.0});
  torch::Tensor decayed = reference.detach().clone().requires_grad_(true);
  torch::Tensor decayed_momentum;
  decayed.mutable_grad() = torch::ones({5, 4});
  SgdStep(decayed, decayed_momentum, {0.1, 0.9, 5e-4});
  EXPECT_FALSE(torch::equal(plain.detach(), decayed.detach()));
}

// ZeRO-Offload's transfer path, run here on CPU tensors (on a GPU the same code copies across
// PCIe; bench/gpu_check.sh): the mirror's update of its master copies, on two host threads,
// gives the replicated SGD step's bits, takes host gradients when given them, and re-reads the
// parameters after Invalidate (a checkpoint restore).
TEST(OffloadMirror, UpdatesMasterCopiesWithTheReplicatedStepsBits) {
  torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(8);
  std::vector<torch::Tensor> params, replicas;
  for (std::int64_t n : {5, 3, 7, 2}) {
    params.push_back(torch::randn({n}, generator).requires_grad_(true));
    replicas.push_back(params.back().detach().clone().requires_grad_(true));
  }
  const ParameterShard owned{1, 4, 5, 17};  // parameters 1..3 (floats 5..17)
  OffloadMirror mirror(params, owned);
  std::vector<torch::Tensor> momentum(4), replica_momentum(4);
  const std::vector<std::int64_t> owned_numels = {3, 7, 2};
  const std::vector<ParameterShard> parts = SplitParameters(owned_numels, 2);
  for (int step = 0; step < 3; ++step) {
    for (std::size_t i = 1; i < 4; ++i) {
      const torch::Tensor grad = torch::randn(params[i].sizes(), generator);
      replicas[i].mutable_grad() = grad.clone();
      if (step == 1) {
        mirror.SetHostGradient(i, grad.clone());  // as the reduce-scatter hands it over (W > 1)
      } else {
        params[i].mutable_grad() = grad.clone();  // as the device's fold leaves it (W = 1)
      }
      SgdStep(replicas[i], replica_momentum[i], {0.05, 0.9, 0.0});
    }
    mirror.Step(parts, 2, {0.05, 0.9, 0.0}, momentum);
    for (std::size_t i = 1; i < 4; ++i) {
      ASSERT_TRUE(torch::equal(params[i].detach(), replicas[i].detach())) << step << " " << i;
      ASSERT_TRUE(torch::equal(mirror.master(i), params[i].detach())) << step << " " << i;
      ASSERT_TRUE(torch::equal(momentum[i], replica_momentum[i])) << step << " " << i;
    }
  }
  EXPECT_FALSE(momentum[0].defined());  // not owned: never touched
  // A restore writes new values into the parameters; after Invalidate the mirror starts there.
  for (std::size_t i = 1; i < 4; ++i) {
    torch::NoGradGuard no_grad;
    params[i].fill_(1.0);
    params[i].mutable_grad() = torch::zeros_like(params[i]);
  }
  mirror.Invalidate();
  std::vector<torch::Tensor> fresh(4);
  mirror.Step(parts, 1, {0.05, 0.9, 0.0}, fresh);
  EXPECT_TRUE(torch::equal(params[2].detach(), torch::ones({7})));
  EXPECT_TRUE(torch::equal(mirror.master(3), torch::ones({2})));
}

}  // namespace
}  // namespace elastic::agent
