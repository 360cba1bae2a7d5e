// Forward, copy and ping-pong timings for the profiler: medians of steady_clock intervals after
// unmeasured warm-up repetitions (first calls pay page faults and LibTorch's allocator set-up).
#include "agent/profile/measure.h"

#include <torch/torch.h>

#include <chrono>
#include <cstring>
#include <string>

#include "agent/common/errors.h"
#include "agent/common/median.h"
#include "agent/data/dataset.h"
#include "agent/model/model.h"
#include "agent/est/device.h"
#include "agent/train/host_probe.h"
#include "agent/train/trainer.h"

namespace elastic::agent {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

ModelFacts InspectModel(const JobConfig& config) {
  std::shared_ptr<Model> model = MakeSeededModel(config, torch::Device(torch::kCPU));
  ModelFacts facts;
  for (const torch::Tensor& parameter : model->parameters()) {
    facts.params += static_cast<double>(parameter.numel());
  }
  facts.blocks = static_cast<int>(model->BlockCount());
  torch::NoGradGuard no_grad;
  model->eval();
  torch::Tensor x = LeadingInputs(LoadTrainingSet(config), 1);
  if (x.dim() == 2) facts.seq_len = static_cast<int>(x.size(1));  // [1, s] tokens
  for (std::int64_t i = 0; i < model->BlockCount(); ++i) {
    x = model->ForwardBlock(i, x);
    facts.block_outputs.push_back(static_cast<double>(x.numel()));
  }
  return facts;
}

PassTimings MeasurePasses(const JobConfig& config, int threads, bool half_too, int warmup, int reps,
                          bool host_probe) {
  JobConfig timed = config;
  timed.train.threads = threads;
  // On the device the training runs on; a GPU pass ends when its kernels have run.
  const torch::Device device = TrainingDevice(config);
  std::shared_ptr<Model> model = MakeSeededModel(timed, device);
  model->train();  // dropout on and the autograd graph recorded, as in a training step
  const std::int64_t batch = config.est_batch();
  const torch::Tensor full =
      LeadingInputs(LoadTrainingSet(config), batch).to(device);
  const torch::Tensor half = full.narrow(0, 0, batch / 2);
  auto time_pass = [&](const torch::Tensor& images) {
    const double probe_ms = host_probe ? TimeHostProbe(threads) : 0.0;
    SynchronizeDevice(device);
    Clock::time_point start = Clock::now();
    torch::Tensor logits = model->forward(images);
    SynchronizeDevice(device);
    const double forward_s = SecondsSince(start);
    model->zero_grad(/*set_to_none=*/true);  // fresh gradients, as each EST's backward writes
    start = Clock::now();
    logits.mean().backward();
    SynchronizeDevice(device);
    const double backward_s = SecondsSince(start);
    const auto n = static_cast<double>(images.size(0));
    return std::pair<Probed, Probed>{{forward_s / n, probe_ms}, {backward_s / n, probe_ms}};
  };
  PassTimings passes;
  for (int i = 0; i < warmup + reps; ++i) {
    const auto [forward, backward] = time_pass(full);
    if (i >= warmup) {
      passes.full.push_back(forward);
      passes.full_backward.push_back(backward);
    }
    if (!half_too) continue;
    const auto [half_forward, half_backward] = time_pass(half);
    if (i >= warmup) {
      passes.half.push_back(half_forward);
      passes.half_backward.push_back(half_backward);
    }
  }
  return passes;
}

double MeasureHostCopyBandwidth(std::size_t bytes, int reps) {
  std::vector<unsigned char> from(bytes, 1), to(bytes, 0);
  std::vector<double> rates;
  unsigned sink = 0;
  for (int i = 0; i < reps + 2; ++i) {
    from[i % bytes] = static_cast<unsigned char>(i);  // a new value each time: no copy to elide
    Clock::time_point start = Clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    const double elapsed = SecondsSince(start);
    sink += to[i % bytes];
    if (i >= 2 && elapsed > 0) rates.push_back(static_cast<double>(bytes) / elapsed);
  }
  if (rates.empty() || sink == 0xFFFFFFFFu) {
    throw TrainingError("profile: host copy of " + std::to_string(bytes) +
                        " bytes measured no time; raise the size");
  }
  return Median(std::move(rates));
}

double MeasureDeviceCopyBandwidth(const JobConfig& config, std::size_t bytes, int reps) {
  const torch::Device device = TrainingDevice(config);
  const auto floats = static_cast<std::int64_t>((bytes + sizeof(float) - 1) / sizeof(float));
  torch::Tensor host = torch::rand({floats}, torch::TensorOptions().pinned_memory(true));
  torch::Tensor on_device = torch::empty({floats}, torch::TensorOptions().device(device));
  std::vector<double> rates;
  for (int i = 0; i < reps + 2; ++i) {
    SynchronizeDevice(device);
    Clock::time_point start = Clock::now();
    on_device.copy_(host, /*non_blocking=*/true);
    host.copy_(on_device, /*non_blocking=*/true);
    SynchronizeDevice(device);
    const double elapsed = SecondsSince(start);
    if (i >= 2 && elapsed > 0) rates.push_back(2.0 * static_cast<double>(bytes) / elapsed);
  }
  if (rates.empty()) throw TrainingError("profile: host-device copy measured no time");
  return Median(std::move(rates));
}

double MeasurePeerBandwidth(Communicator& world, std::size_t bytes, int reps) {
  if (world.size() < 2) {
    throw TrainingError("profile-bandwidth: needs at least 2 ranks (run it under mpirun -np 2)");
  }
  std::vector<std::uint8_t> message(bytes, 7);
  std::vector<double> rates;
  world.Barrier();
  for (int i = 0; i < reps + 2; ++i) {
    if (world.rank() == 0) {
      Clock::time_point start = Clock::now();
      world.Send(message, 1);
      std::vector<std::uint8_t> back = world.Receive(1);
      const double round_trip = SecondsSince(start);
      if (back.size() != bytes) throw TrainingError("profile-bandwidth: short reply");
      // Two one-way transfers of `bytes` each per round trip.
      if (i >= 2 && round_trip > 0) rates.push_back(2.0 * static_cast<double>(bytes) / round_trip);
    } else if (world.rank() == 1) {
      std::vector<std::uint8_t> received = world.Receive(0);
      world.Send(received, 0);
    }
  }
  std::string text = world.rank() == 0 ? std::to_string(Median(std::move(rates))) : "";
  return std::stod(BroadcastText(world, text));
}

}  // namespace elastic::agent
