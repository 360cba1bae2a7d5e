// Simulated cluster specs: NODESxDEVICES[:TYPE] joined by commas, e.g. "32x8:a100,16x4:v100".
// Pure parsing; errors name the item, the value and the expected form.
#pragma once

#include <string>
#include <string_view>

#include "scheduler/policy/types.h"

namespace elastic::sim {

struct ClusterOrError {
  policy::ClusterState cluster;  // every node fully free
  std::string error;
};

// Each node gets cpus_per_device CPUs and memory_mb_per_device MiB of memory per device.
ClusterOrError ParseClusterSpec(std::string_view spec, int cpus_per_device = 8,
                                long memory_mb_per_device = 64 * 1024);

}  // namespace elastic::sim
