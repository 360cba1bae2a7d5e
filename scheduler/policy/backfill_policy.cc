// EASY backfill over device types (see backfill_policy.h).
#include "scheduler/policy/backfill_policy.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "scheduler/policy/placement.h"

namespace elastic::policy {
namespace {

// Expected device releases of one type: (time, devices), sorted by time.
using Releases = std::vector<std::pair<double, int>>;

struct HeadReservation {
  Reservation reservation;
  int extra_devices = 0;  // devices of that type still free at the reservation after the head
};

void AddReleases(const ClusterState& cluster, const Allocation& allocation, double end_s,
                 std::map<std::string, Releases>& releases) {
  for (const Slice& slice : allocation) {
    releases[cluster.nodes[slice.node].device_type].emplace_back(end_s, slice.devices);
  }
}

// Earliest time enough devices of one type are free for `job`; ties go to the faster type.
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

// Types in the order a job tries them: fastest first, then cluster order.
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

std::string StartReason(const JobState& job, const std::string& type,
                        const std::optional<HeadReservation>& head) {
  std::ostringstream reason;
  reason << "backfill: " << job.requested_devices << " " << type;
  if (!head) {
    reason << " free, in queue order";
  } else {
    reason << " free, backfilled without delaying " << head->reservation.job_id
           << " (reserved at t=" << head->reservation.start_s << " on "
           << head->reservation.device_type << ")";
  }
  return reason.str();
}

}  // namespace

PolicyOutput BackfillPolicy::Decide(const ClusterState& cluster, const std::vector<JobState>& jobs,
                                    double now_s) const {
  PolicyOutput output;
  FreeLedger ledger(cluster);
  std::map<std::string, Releases> releases;
  for (const JobState& job : jobs) {
    if (job.running()) AddReleases(cluster, job.allocation, job.expected_end_s, releases);
  }
  const std::vector<std::string> types = TypesByCapability(cluster);
  std::optional<HeadReservation> head;
  for (const JobState* job : QueueOrder(jobs)) {
    double end_s = now_s + job->expected_runtime_s;
    for (const std::string& type : types) {
      if (head && type == head->reservation.device_type && end_s > head->reservation.start_s &&
          job->requested_devices > head->extra_devices) {
        continue;  // would hold devices the head is waiting for past its reservation
      }
      std::optional<Allocation> picked =
          PickDevices(cluster, ledger, *job, type, job->requested_devices);
      if (!picked) continue;
      ledger.Take(*picked, *job);
      AddReleases(cluster, *picked, end_s, releases);
      if (head && type == head->reservation.device_type && end_s > head->reservation.start_s) {
        head->extra_devices -= job->requested_devices;
      }
      output.decisions.push_back(
          {DecisionKind::kStart, job->id, *picked, StartReason(*job, type, head)});
      break;
    }
    if (!head && (output.decisions.empty() || output.decisions.back().job_id != job->id)) {
      head = Reserve(cluster, ledger, releases, *job, now_s);
      if (head) output.reservations.push_back(head->reservation);
    }
  }
  (void)options_;
  return output;
}

}  // namespace elastic::policy
