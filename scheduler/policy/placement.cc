// Placement helpers: free-capacity ledger, device picking, allocation arithmetic.
#include "scheduler/policy/placement.h"

#include <algorithm>

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

model::Shape ShapeOf(const ClusterState& cluster, const Allocation& allocation,
                     const JobState& job) {
  model::Shape shape = ShapeOf(cluster, allocation);
  shape.cpus_per_device = job.cpus_per_device;
  shape.host_mb = static_cast<double>(job.offload_mb_per_device) * DeviceCount(allocation);
  return shape;
}

FreeLedger::FreeLedger(const ClusterState& cluster) : cluster_(&cluster) {
  types_ = DeviceTypes(cluster);
  std::vector<int> largest(types_.size(), 0);
  devices_.reserve(cluster.nodes.size());
  cpus_.reserve(cluster.nodes.size());
  memory_mb_.reserve(cluster.nodes.size());
  type_of_.reserve(cluster.nodes.size());
  int type = 0;  // nodes come in runs of one type: the last node's is checked first
  for (const NodeState& node : cluster.nodes) {
    devices_.push_back(node.free_devices);
    cpus_.push_back(node.free_cpus);
    memory_mb_.push_back(node.free_memory_mb);
    if (types_[type] != node.device_type) {
      type = static_cast<int>(std::find(types_.begin(), types_.end(), node.device_type) -
                              types_.begin());
    }
    type_of_.push_back(type);
    largest[type] = std::max({largest[type], node.devices, node.free_devices});
  }
  free_of_type_.assign(types_.size(), 0);
  buckets_.resize(types_.size());
  for (size_t t = 0; t < types_.size(); ++t) buckets_[t].resize(largest[t] + 1);
  for (size_t i = 0; i < devices_.size(); ++i) {
    free_of_type_[type_of_[i]] += std::max(devices_[i], 0);
    if (devices_[i] > 0) buckets_[type_of_[i]][devices_[i]].insert(static_cast<int>(i));
  }
}

void FreeLedger::Rebucket(int node, int before) {
  int type = type_of_[node];
  std::vector<std::set<int>>& buckets = buckets_[type];
  int after = std::max(devices_[node], 0);
  before = std::max(before, 0);
  free_of_type_[type] += after - before;
  if (after == before) return;
  if (before > 0) buckets[before].erase(node);  // bucket 0 is not kept (see Buckets)
  if (after >= static_cast<int>(buckets.size())) buckets.resize(after + 1);
  if (after > 0) buckets[after].insert(node);
}

const std::vector<std::set<int>>* FreeLedger::Buckets(const std::string& device_type) const {
  auto it = std::find(types_.begin(), types_.end(), device_type);
  if (it == types_.end()) return nullptr;
  return &buckets_[it - types_.begin()];
}

int FreeLedger::Available(int node, const JobState& job) const {
  std::int64_t fit = devices_[node];
  if (job.cpus_per_device > 0) fit = std::min<std::int64_t>(fit, cpus_[node] / job.cpus_per_device);
  if (job.HostMemoryPerDevice() > 0) {
    fit = std::min(fit, memory_mb_[node] / job.HostMemoryPerDevice());
  }
  return static_cast<int>(std::max<std::int64_t>(fit, 0));
}

int FreeLedger::FreeDevicesOfType(const std::string& device_type) const {
  auto it = std::find(types_.begin(), types_.end(), device_type);
  return it == types_.end() ? 0 : free_of_type_[it - types_.begin()];
}

void FreeLedger::Take(const Allocation& delta, const JobState& job) {
  for (const Slice& slice : delta) {
    int before = devices_[slice.node];
    devices_[slice.node] -= slice.devices;
    Rebucket(slice.node, before);
    cpus_[slice.node] -= slice.devices * job.cpus_per_device;
    memory_mb_[slice.node] -= slice.devices * job.HostMemoryPerDevice();
  }
}

void FreeLedger::Give(const Allocation& delta, const JobState& job) {
  for (const Slice& slice : delta) {
    int before = devices_[slice.node];
    devices_[slice.node] += slice.devices;
    Rebucket(slice.node, before);
    cpus_[slice.node] += slice.devices * job.cpus_per_device;
    memory_mb_[slice.node] += slice.devices * job.HostMemoryPerDevice();
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

namespace {

// Best fit and emptiest-first through the ledger's buckets (nodes by free devices), checking the
// job's CPU and memory needs per node (FreeLedger::Available) as it goes, so it rarely scans the
// whole cluster. With needs that never bind it picks exactly what PickDevicesByScan picks.
std::optional<Allocation> PickByBuckets(const FreeLedger& ledger,
                                        const std::vector<std::set<int>>& buckets,
                                        const JobState& job, const ClusterState& cluster,
                                        const std::string& device_type, int count) {
  Allocation picked;
  int remaining = count;
  std::set<int> used;  // nodes already drained by the steps before
  for (const Slice& held : job.allocation) {  // grow where the job already runs
    if (cluster.nodes[held.node].device_type != device_type) continue;
    int devices = std::min(ledger.Available(held.node, job), remaining);
    used.insert(held.node);
    if (devices <= 0) continue;
    picked.push_back({held.node, devices});
    remaining -= devices;
  }
  if (remaining <= 0) return Merge({}, picked);
  for (size_t free = remaining; free < buckets.size(); ++free) {  // best fit
    for (int node : buckets[free]) {
      if (used.count(node) || ledger.Available(node, job) < remaining) continue;
      picked.push_back({node, remaining});
      return Merge({}, picked);
    }
  }
  for (size_t free = buckets.size() - 1; free > 0 && remaining > 0; --free) {  // spread
    for (int node : buckets[free]) {
      if (remaining <= 0) break;
      if (used.count(node)) continue;
      int devices = std::min(ledger.Available(node, job), remaining);
      if (devices <= 0) continue;
      picked.push_back({node, devices});
      remaining -= devices;
    }
  }
  if (remaining > 0) return std::nullopt;
  return Merge({}, picked);
}

}  // namespace

std::optional<Allocation> PickDevices(const ClusterState& cluster, const FreeLedger& ledger,
                                      const JobState& job, const std::string& device_type,
                                      int count) {
  if (count <= 0) return std::nullopt;
  const std::vector<std::set<int>>* buckets = ledger.Buckets(device_type);
  if (!buckets || ledger.FreeDevicesOfType(device_type) < count) return std::nullopt;
  return PickByBuckets(ledger, *buckets, job, cluster, device_type, count);
}

std::optional<Allocation> PickDevicesByScan(const ClusterState& cluster, const FreeLedger& ledger,
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

// Per-node sums in node order; a sorted vector instead of a std::map (called for every
// proposal and grant: the map's allocations were most of its cost).
Allocation Merge(const Allocation& a, const Allocation& b) {
  Allocation all;
  all.reserve(a.size() + b.size());
  all.insert(all.end(), a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end(),
            [](const Slice& x, const Slice& y) { return x.node < y.node; });
  Allocation merged;
  for (size_t i = 0; i < all.size();) {
    Slice sum{all[i].node, 0};
    for (; i < all.size() && all[i].node == sum.node; ++i) sum.devices += all[i].devices;
    if (sum.devices > 0) merged.push_back(sum);
  }
  return merged;
}

}  // namespace elastic::policy
