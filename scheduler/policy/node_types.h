// A live node's device type and its speed (capability, a100 = 2 against a reference GPU of 1),
// which the policies' heterogeneous paths read (Rubick's minRes per type, fastest type first,
// slopes on capability). The type is the node's gres GPU type ("gpu:a100:8" -> a100), else the
// first of its Slurm features that elasticd.toml [node_types] names, else "node"; the capability
// is [node_types]'s for the type, 1.0 for a type the table does not name. Pure.
#pragma once

#include <map>
#include <string>

#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

inline constexpr const char* kUntypedNode = "node";

struct NodeType {
  std::string name = kUntypedNode;
  double capability = 1.0;
};

NodeType NodeTypeOf(const SlurmNode& node, const std::map<std::string, double>& capabilities);

}  // namespace elastic::policy
