// TrainingDevice, the CUDA determinism settings and the per-EST CUDA generator seeding.
#include "agent/est/device.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "agent/common/errors.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

int LocalRank(const EnvLookup& env) {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}) {
    if (std::optional<std::string> value = env(name)) {
      try {
        return std::stoi(*value);
      } catch (const std::exception&) {
        throw ConfigError(std::string(name) + "=" + *value + ": expected a node-local rank");
      }
    }
  }
  return 0;
}

void PrepareCudaDeterminism() {
  // ":4096:8" is the setting NVIDIA documents for reproducible cuBLAS results; overwrite = 0
  // keeps an administrator's choice.
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
}

}  // namespace

torch::Device TrainingDevice(const JobConfig& config, const EnvLookup& env) {
  if (config.train.device == ComputeDevice::kCpu) return torch::Device(torch::kCPU);
  PrepareCudaDeterminism();
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (gpus == 0) {
    throw ConfigError(
        "train.device: \"cuda\" but this process sees no CUDA device (LibTorch built without "
        "CUDA, no GPU on the node, or CUDA_VISIBLE_DEVICES hides them): expected \"cpu\" here");
  }
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(LocalRank(env) % gpus)};
}

void SeedDeviceGeneratorFromEst(torch::Device device) {
  if (!device.is_cuda()) return;
  std::uint64_t seed = 0;
  {
    at::Generator cpu = at::detail::getDefaultCPUGenerator();  // the EST's stream (EstRngScope)
    std::lock_guard<std::mutex> lock(cpu.mutex());
    seed = at::check_generator<at::CPUGeneratorImpl>(cpu)->random64();
  }
  at::Generator cuda = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(cuda.mutex());
  cuda.set_current_seed(seed);  // also restarts the Philox offset at 0
}

void SynchronizeDevice(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace elastic::agent
