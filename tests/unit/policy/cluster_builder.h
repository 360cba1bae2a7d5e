// Test helper: adds identical nodes of one device type to a ClusterState.
#pragma once

#include <string>

#include "scheduler/policy/types.h"

namespace elastic::policy {

// `nodes` nodes named <type><index>, each with `devices` free devices of `type` at relative
// speed `capability`, 64 CPUs and 1 TiB (1 << 20 MB) of memory, all free.
inline void AddNodes(ClusterState& cluster, int nodes, int devices, const std::string& type,
                     double capability) {
  for (int i = 0; i < nodes; ++i) {
    cluster.nodes.push_back({type + std::to_string(cluster.nodes.size()), type, capability,
                             devices, devices, 64, 64, 1 << 20, 1 << 20});
  }
}

}  // namespace elastic::policy
