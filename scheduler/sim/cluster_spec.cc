// Cluster spec parser (see cluster_spec.h).
#include "scheduler/sim/cluster_spec.h"

#include <charconv>
#include <string>
#include <vector>

#include "scheduler/model/throughput_model.h"

namespace elastic::sim {
namespace {

constexpr std::string_view kForm =
    "expected NODESxDEVICES[:TYPE][:cpus=N][:mem=SIZE] with counts >= 1, e.g. "
    "16x8:a100:cpus=64:mem=512G";

bool ParseCount(std::string_view text, long limit, long& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty() && out >= 1 &&
         out <= limit;
}

bool ParseCount(std::string_view text, int& out) {
  long value = 0;
  if (!ParseCount(text, 100'000, value)) return false;
  out = static_cast<int>(value);
  return true;
}

// SIZE: an integer with a unit M, G or T (MiB, GiB, TiB); returns MiB.
bool ParseMemory(std::string_view text, long& mb) {
  if (text.size() < 2) return false;
  long scale = 0;
  switch (text.back()) {
    case 'M': case 'm': scale = 1; break;
    case 'G': case 'g': scale = 1024; break;
    case 'T': case 't': scale = 1024L * 1024; break;
    default: return false;
  }
  long value = 0;
  if (!ParseCount(text.substr(0, text.size() - 1), 1'000'000'000L / scale, value)) return false;
  mb = value * scale;
  return true;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == text.npos ? text.npos : at - start));
    if (at == text.npos) return parts;
    start = at + 1;
  }
}

// One item of the spec: the node group it describes, or an error.
struct Group {
  int nodes = 0;
  int devices = 0;
  std::string type = "gpu";
  long cpus = -1;       // per node; < 0 = default
  long memory_mb = -1;  // per node; < 0 = default
};

std::string ParseItem(std::string_view item, Group& group) {
  std::vector<std::string_view> parts = Split(item, ':');
  size_t x = parts[0].find('x');
  if (x == std::string_view::npos || !ParseCount(parts[0].substr(0, x), group.nodes) ||
      !ParseCount(parts[0].substr(x + 1), group.devices)) {
    return std::string(kForm);
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    size_t equals = part.find('=');
    if (equals == std::string_view::npos) {
      if (i != 1) {
        return "the device type must come right after NODESxDEVICES; " + std::string(kForm);
      }
      group.type = std::string(part);
      continue;
    }
    std::string_view key = part.substr(0, equals);
    std::string_view value = part.substr(equals + 1);
    if (key == "cpus") {
      if (group.cpus >= 0 || !ParseCount(value, 1'000'000, group.cpus)) {
        return "invalid cpus \"" + std::string(value) + "\": expected one integer >= 1 per node";
      }
    } else if (key == "mem") {
      if (group.memory_mb >= 0 || !ParseMemory(value, group.memory_mb)) {
        return "invalid mem \"" + std::string(value) +
               "\": expected one size per node with a unit M, G or T, e.g. 512G";
      }
    } else {
      return "unknown key \"" + std::string(key) + "\": expected cpus or mem";
    }
  }
  if (!model::DeviceCapability(group.type)) {
    return "unknown device type \"" + group.type + "\": expected one of " +
           std::string(model::DeviceTypeChoices());
  }
  return {};
}

}  // namespace

Result<policy::ClusterState> ParseClusterSpec(std::string_view spec, int cpus_per_device,
                                              long memory_mb_per_device) {
  policy::ClusterState cluster;
  for (std::string_view item : Split(spec, ',')) {
    Group group;
    std::string error = ParseItem(item, group);
    if (!error.empty()) {
      return Result<policy::ClusterState>::Fail("elastic-sim: --cluster: invalid item \"" +
                                                std::string(item) + "\": " + error);
    }
    double capability = *model::DeviceCapability(group.type);
    long cpus = group.cpus >= 0 ? group.cpus : static_cast<long>(group.devices) * cpus_per_device;
    long memory_mb =
        group.memory_mb >= 0 ? group.memory_mb : group.devices * memory_mb_per_device;
    for (int i = 0; i < group.nodes; ++i) {
      policy::NodeState node;
      node.name = group.type + "-" + std::to_string(cluster.nodes.size());
      node.device_type = group.type;
      node.capability = capability;
      node.devices = node.free_devices = group.devices;
      node.cpus = node.free_cpus = static_cast<int>(cpus);
      node.memory_mb = node.free_memory_mb = memory_mb;
      cluster.nodes.push_back(std::move(node));
    }
  }
  return Result<policy::ClusterState>::Ok(std::move(cluster));
}

}  // namespace elastic::sim
