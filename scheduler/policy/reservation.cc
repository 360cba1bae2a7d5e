// EASY head reservations (see reservation.h); moved out of backfill so `elastic` computes the
// very same reservations.
#include "scheduler/policy/reservation.h"

#include <algorithm>

namespace elastic::policy {

void AddReleases(const ClusterState& cluster, const Allocation& allocation, double end_s,
                 std::map<std::string, Releases>& releases) {
  for (const Slice& slice : allocation) {
    releases[cluster.nodes[slice.node].device_type].emplace_back(end_s, slice.devices);
  }
}

std::optional<HeadReservation> Reserve(const ClusterState& cluster, const FreeLedger& ledger,
                                       std::map<std::string, Releases>& releases,
                                       const JobState& job, double now_s) {
  std::optional<HeadReservation> best;
  double best_capability = 0.0;
  for (const std::string& type : DeviceTypes(cluster)) {
    Releases& list = releases[type];
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    int free = ledger.FreeDevicesOfType(type);
    double at = now_s;
    for (size_t i = 0; free < job.requested_devices && i < list.size(); ++i) {
      at = std::max(now_s, list[i].first);
      free += list[i].second;
      while (i + 1 < list.size() && list[i + 1].first == list[i].first) free += list[++i].second;
    }
    if (free < job.requested_devices) continue;
    double capability = 1.0;
    for (const NodeState& node : cluster.nodes) {
      if (node.device_type == type) capability = node.capability;
    }
    if (!best || at < best->reservation.start_s ||
        (at == best->reservation.start_s && capability > best_capability)) {
      best = HeadReservation{{job.id, at, type}, free - job.requested_devices};
      best_capability = capability;
    }
  }
  return best;
}

std::vector<std::string> TypesByCapability(const ClusterState& cluster) {
  std::vector<std::pair<std::string, double>> typed;
  for (const std::string& type : DeviceTypes(cluster)) {
    for (const NodeState& node : cluster.nodes) {
      if (node.device_type == type) {
        typed.emplace_back(type, node.capability);
        break;
      }
    }
  }
  std::stable_sort(typed.begin(), typed.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> types;
  for (const auto& entry : typed) types.push_back(entry.first);
  return types;
}

}  // namespace elastic::policy
