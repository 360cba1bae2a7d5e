// Cluster spec parser (see cluster_spec.h).
#include "scheduler/sim/cluster_spec.h"

#include <charconv>
#include <string>

#include "scheduler/model/throughput_model.h"

namespace elastic::sim {
namespace {

bool ParseCount(std::string_view text, int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty() && out >= 1 &&
         out <= 100'000;
}

}  // namespace

ClusterOrError ParseClusterSpec(std::string_view spec, int cpus_per_device,
                                long memory_mb_per_device) {
  ClusterOrError result;
  auto fail = [&](std::string_view item, const std::string& what) {
    result.cluster.nodes.clear();
    result.error = "elastic-sim: --cluster: invalid item \"" + std::string(item) + "\": " + what;
    return result;
  };
  if (spec.empty()) return fail(spec, "expected NODESxDEVICES[:TYPE][,...], e.g. 32x8:a100");
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string_view item = spec.substr(start, comma == std::string_view::npos ? spec.npos
                                                                                : comma - start);
    start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    size_t x = item.find('x');
    size_t colon = item.find(':');
    std::string type = colon == std::string_view::npos ? "gpu" : std::string(item.substr(colon + 1));
    std::string_view devices_text =
        x == std::string_view::npos ? "" : item.substr(x + 1, colon == item.npos ? item.npos
                                                                                 : colon - x - 1);
    int nodes = 0;
    int devices = 0;
    if (x == std::string_view::npos || !ParseCount(item.substr(0, x), nodes) ||
        !ParseCount(devices_text, devices)) {
      return fail(item, "expected NODESxDEVICES[:TYPE] with counts >= 1, e.g. 32x8:a100");
    }
    std::optional<double> capability = model::DeviceCapability(type);
    if (!capability) {
      return fail(item, "unknown device type \"" + type + "\": expected one of " +
                            std::string(model::DeviceTypeChoices()));
    }
    for (int i = 0; i < nodes; ++i) {
      policy::NodeState node;
      node.name = type + "-" + std::to_string(result.cluster.nodes.size());
      node.device_type = type;
      node.capability = *capability;
      node.devices = node.free_devices = devices;
      node.cpus = node.free_cpus = devices * cpus_per_device;
      node.memory_mb = node.free_memory_mb = devices * memory_mb_per_device;
      result.cluster.nodes.push_back(std::move(node));
    }
  }
  return result;
}

}  // namespace elastic::sim
