// NVML through dlopen: nvmlInit_v2, the device count, each device's total memory.
#include "agent/supervisor/gpu_memory.h"

#include <dlfcn.h>

#include <algorithm>

namespace elastic::agent {
namespace {

// NVML's C ABI (nvml.h), declared here so the build needs no CUDA toolkit: nvmlReturn_t is an
// int (0 = NVML_SUCCESS), a device is an opaque handle, nvmlMemory_t is {total, free, used}.
struct NvmlMemory {
  unsigned long long total, free, used;
};
using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using CountFn = int (*)(unsigned int*);
using HandleFn = int (*)(unsigned int, NvmlDevice*);
using MemoryFn = int (*)(NvmlDevice, NvmlMemory*);

template <typename Fn>
Fn Symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

std::optional<GpuMemory> ReadGpuMemory(std::string& why) {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) {
    why = "no NVML on this node (libnvidia-ml.so.1: the NVIDIA driver's library)";
    return std::nullopt;
  }
  auto init = Symbol<InitFn>(nvml, "nvmlInit_v2");
  auto shutdown = Symbol<ShutdownFn>(nvml, "nvmlShutdown");
  auto count = Symbol<CountFn>(nvml, "nvmlDeviceGetCount_v2");
  auto handle = Symbol<HandleFn>(nvml, "nvmlDeviceGetHandleByIndex_v2");
  auto memory = Symbol<MemoryFn>(nvml, "nvmlDeviceGetMemoryInfo");
  std::optional<GpuMemory> result;
  unsigned int devices = 0;
  if (!init || !shutdown || !count || !handle || !memory) {
    why = "NVML lacks the functions this reads (nvmlInit_v2, nvmlDeviceGetMemoryInfo, ...)";
  } else if (init() != 0) {
    why = "nvmlInit_v2 failed";
  } else {
    if (count(&devices) != 0 || devices == 0) why = "NVML lists no GPU on this node";
    GpuMemory gpus;
    for (unsigned int i = 0; i < devices; ++i) {
      NvmlDevice device = nullptr;
      NvmlMemory info{};
      // A GPU the job's cgroup hides cannot be opened: it is not the job's, skip it.
      if (handle(i, &device) != 0 || memory(device, &info) != 0) continue;
      const double total = static_cast<double>(info.total);
      gpus.smallest_total_bytes =
          gpus.devices == 0 ? total : std::min(gpus.smallest_total_bytes, total);
      ++gpus.devices;
    }
    if (gpus.devices > 0) result = gpus;
    else if (why.empty()) why = "NVML could not read any GPU's memory";
    shutdown();
  }
  dlclose(nvml);
  return result;
}

}  // namespace elastic::agent
