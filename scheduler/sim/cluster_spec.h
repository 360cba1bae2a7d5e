// Simulated cluster specs: NODESxDEVICES[:TYPE][:cpus=N][:mem=SIZE] joined by commas, e.g.
// "16x8:a100:cpus=64:mem=512G,32x4:v100". cpus and mem are per node (SIZE: integer with unit M, G
// or T); left out, a node gets cpus_per_device CPUs and memory_mb_per_device MiB per device.
// Pure parsing; errors name the item, the value and the expected form.
#pragma once

#include <string_view>

#include "common/result.h"
#include "scheduler/policy/types.h"

namespace elastic::sim {

// The cluster with every node fully free.
Result<policy::ClusterState> ParseClusterSpec(std::string_view spec, int cpus_per_device = 8,
                                              long memory_mb_per_device = 64 * 1024);

}  // namespace elastic::sim
