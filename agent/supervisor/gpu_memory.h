// The memory of this node's GPUs, for a cuda job's plan budget: read through NVML (the driver's
// libnvidia-ml.so.1, opened at run time, so nothing is needed to build and a node without a
// driver simply has no answer). Thin adapter; not thread-safe.
#pragma once

#include <optional>
#include <string>

namespace elastic::agent {

struct GpuMemory {
  double smallest_total_bytes = 0;  // of the GPUs NVML lists here
  int devices = 0;
};

// nullopt with `why` set when NVML is missing, fails, or lists no GPU.
std::optional<GpuMemory> ReadGpuMemory(std::string& why);

}  // namespace elastic::agent
