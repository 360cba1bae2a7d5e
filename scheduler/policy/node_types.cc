// NodeTypeOf: gres GPU type, then a configured feature, then "node".
#include "scheduler/policy/node_types.h"

namespace elastic::policy {

NodeType NodeTypeOf(const SlurmNode& node, const std::map<std::string, double>& capabilities) {
  NodeType type;
  if (!node.gpu_type.empty()) {
    type.name = node.gpu_type;
  } else {
    for (const std::string& feature : node.features) {
      if (capabilities.contains(feature)) {
        type.name = feature;
        break;
      }
    }
  }
  auto it = capabilities.find(type.name);
  if (it != capabilities.end()) type.capability = it->second;
  return type;
}

}  // namespace elastic::policy
