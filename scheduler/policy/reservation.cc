// EASY head reservations (see reservation.h); moved out of backfill so `elastic` computes the
// very same reservations.
#include "scheduler/policy/reservation.h"

#include <algorithm>
#include <limits>

namespace elastic::policy {
namespace {

double CapabilityOf(const ClusterState& cluster, const std::string& type) {
  for (const NodeState& node : cluster.nodes) {
    if (node.device_type == type) return node.capability;
  }
  return 1.0;
}

}  // namespace

long Usable(const NodeAmounts& free, int cpus_per_device, std::int64_t memory_mb_per_device) {
  long usable = free.devices;
  if (cpus_per_device > 0) usable = std::min(usable, free.cpus / cpus_per_device);
  if (memory_mb_per_device > 0) {
    usable = std::min(usable, static_cast<long>(free.memory_mb / memory_mb_per_device));
  }
  return std::max(usable, 0L);
}

void AddReleases(const ClusterState& cluster, const Allocation& allocation, const JobState& job,
                 double end_s, std::map<std::string, Releases>& releases) {
  for (const Slice& slice : allocation) {
    releases[cluster.nodes[slice.node].device_type].push_back(
        {end_s, slice.node, slice.devices, static_cast<long>(slice.devices) * job.cpus_per_device,
         slice.devices * job.HostMemoryPerDevice()});
  }
}

std::optional<HeadReservation> ReserveOnType(const ClusterState& cluster, const FreeLedger& ledger,
                                             std::map<std::string, Releases>& releases,
                                             const JobState& job, const std::string& type,
                                             int cpus_per_device, double now_s) {
  const std::int64_t memory = job.HostMemoryPerDevice();
  std::map<int, NodeAmounts> free;  // nodes of the type
  long usable = 0;
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    if (cluster.nodes[n].device_type != type) continue;
    int node = static_cast<int>(n);
    NodeAmounts& amounts = free[node];
    amounts = {ledger.FreeDevices(node), ledger.FreeCpus(node), ledger.FreeMemoryMb(node)};
    usable += Usable(amounts, cpus_per_device, memory);
  }
  Releases& list = releases[type];
  std::stable_sort(list.begin(), list.end(),
                   [](const Release& a, const Release& b) { return a.time_s < b.time_s; });
  double at = now_s;
  size_t i = 0;
  while (usable < job.requested_devices && i < list.size()) {
    const double t = list[i].time_s;  // releases at the same time count together
    at = std::max(now_s, t);
    for (; i < list.size() && list[i].time_s == t; ++i) {
      NodeAmounts& amounts = free[list[i].node];
      usable -= Usable(amounts, cpus_per_device, memory);
      amounts.devices += list[i].devices;
      amounts.cpus += list[i].cpus;
      amounts.memory_mb += list[i].memory_mb;
      usable += Usable(amounts, cpus_per_device, memory);
    }
  }
  if (usable < job.requested_devices) return std::nullopt;
  HeadReservation head;
  head.reservation = {job.id, at, type};
  head.extra_devices = static_cast<int>(
      std::min<long>(usable - job.requested_devices, std::numeric_limits<int>::max()));
  head.cpus_per_device = cpus_per_device;
  head.memory_mb_per_device = memory;
  return head;
}

bool EarlierReservation(const ClusterState& cluster, const HeadReservation& a,
                        const std::optional<HeadReservation>& b) {
  if (!b) return true;
  if (a.reservation.start_s != b->reservation.start_s) {
    return a.reservation.start_s < b->reservation.start_s;
  }
  return CapabilityOf(cluster, a.reservation.device_type) >
         CapabilityOf(cluster, b->reservation.device_type);
}

std::optional<HeadReservation> Reserve(const ClusterState& cluster, const FreeLedger& ledger,
                                       std::map<std::string, Releases>& releases,
                                       const JobState& job, double now_s) {
  std::optional<HeadReservation> best;
  for (const std::string& type : DeviceTypes(cluster)) {
    std::optional<HeadReservation> head =
        ReserveOnType(cluster, ledger, releases, job, type, job.cpus_per_device, now_s);
    if (head && EarlierReservation(cluster, *head, best)) best = head;
  }
  return best;
}

std::vector<std::string> TypesByCapability(const ClusterState& cluster) {
  std::vector<std::pair<std::string, double>> typed;
  for (const std::string& type : DeviceTypes(cluster)) {
    typed.emplace_back(type, CapabilityOf(cluster, type));
  }
  std::stable_sort(typed.begin(), typed.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> types;
  for (const auto& entry : typed) types.push_back(entry.first);
  return types;
}

}  // namespace elastic::policy
