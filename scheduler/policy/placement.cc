// Placement helpers: free-capacity ledger, device picking, allocation arithmetic.
#include "scheduler/policy/placement.h"

#include <algorithm>
#include <map>

namespace elastic::policy {

int DeviceCount(const Allocation& allocation) {
  int total = 0;
  for (const Slice& slice : allocation) total += slice.devices;
  return total;
}

model::Shape ShapeOf(const ClusterState& cluster, const Allocation& allocation) {
  model::Shape shape;
  for (const Slice& slice : allocation) {
    if (slice.devices <= 0) continue;
    double capability = cluster.nodes[slice.node].capability;
    auto it = std::find_if(shape.groups.begin(), shape.groups.end(),
                           [&](const auto& group) { return group.first == capability; });
    if (it == shape.groups.end()) {
      shape.groups.emplace_back(capability, slice.devices);
    } else {
      it->second += slice.devices;
    }
    ++shape.nodes;
  }
  return shape;
}

FreeLedger::FreeLedger(const ClusterState& cluster) : cluster_(&cluster) {
  for (const NodeState& node : cluster.nodes) {
    devices_.push_back(node.free_devices);
    cpus_.push_back(node.free_cpus);
    memory_mb_.push_back(node.free_memory_mb);
  }
}

int FreeLedger::Available(int node, const JobState& job) const {
  std::int64_t fit = devices_[node];
  if (job.cpus_per_device > 0) fit = std::min<std::int64_t>(fit, cpus_[node] / job.cpus_per_device);
  if (job.memory_mb_per_device > 0) fit = std::min(fit, memory_mb_[node] / job.memory_mb_per_device);
  return static_cast<int>(std::max<std::int64_t>(fit, 0));
}

int FreeLedger::FreeDevicesOfType(const std::string& device_type) const {
  int total = 0;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (cluster_->nodes[i].device_type == device_type) total += devices_[i];
  }
  return total;
}

void FreeLedger::Take(const Allocation& delta, const JobState& job) {
  for (const Slice& slice : delta) {
    devices_[slice.node] -= slice.devices;
    cpus_[slice.node] -= slice.devices * job.cpus_per_device;
    memory_mb_[slice.node] -= slice.devices * job.memory_mb_per_device;
  }
}

void FreeLedger::Give(const Allocation& delta, const JobState& job) {
  for (const Slice& slice : delta) {
    devices_[slice.node] += slice.devices;
    cpus_[slice.node] += slice.devices * job.cpus_per_device;
    memory_mb_[slice.node] += slice.devices * job.memory_mb_per_device;
  }
}

std::vector<std::string> DeviceTypes(const ClusterState& cluster) {
  std::vector<std::string> types;
  for (const NodeState& node : cluster.nodes) {
    if (std::find(types.begin(), types.end(), node.device_type) == types.end()) {
      types.push_back(node.device_type);
    }
  }
  return types;
}

std::optional<Allocation> PickDevices(const ClusterState& cluster, const FreeLedger& ledger,
                                      const JobState& job, const std::string& device_type,
                                      int count) {
  if (count <= 0) return std::nullopt;
  std::vector<int> available(cluster.nodes.size(), 0);
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    if (cluster.nodes[i].device_type == device_type) {
      available[i] = ledger.Available(static_cast<int>(i), job);
    }
  }
  Allocation picked;
  int remaining = count;
  auto take = [&](int node, int devices) {
    picked.push_back({node, devices});
    available[node] -= devices;
    remaining -= devices;
  };
  for (const Slice& held : job.allocation) {  // grow where the job already runs
    int devices = std::min(available[held.node], remaining);
    if (devices > 0) take(held.node, devices);
  }
  if (remaining > 0) {  // best fit: the fullest node that still holds the rest
    int best = -1;
    for (size_t i = 0; i < available.size(); ++i) {
      if (available[i] >= remaining && (best < 0 || available[i] < available[best])) {
        best = static_cast<int>(i);
      }
    }
    if (best >= 0) take(best, remaining);
  }
  if (remaining > 0) {  // spread: emptiest nodes first, fewest nodes overall
    std::vector<int> order;
    for (size_t i = 0; i < available.size(); ++i) {
      if (available[i] > 0) order.push_back(static_cast<int>(i));
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return available[a] > available[b]; });
    for (int node : order) {
      if (remaining == 0) break;
      take(node, std::min(available[node], remaining));
    }
  }
  if (remaining > 0) return std::nullopt;
  return Merge({}, picked);
}

Allocation Merge(const Allocation& a, const Allocation& b) {
  std::map<int, int> per_node;
  for (const Slice& slice : a) per_node[slice.node] += slice.devices;
  for (const Slice& slice : b) per_node[slice.node] += slice.devices;
  Allocation merged;
  for (const auto& [node, devices] : per_node) {
    if (devices > 0) merged.push_back({node, devices});
  }
  return merged;
}

}  // namespace elastic::policy
