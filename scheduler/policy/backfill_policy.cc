// EASY backfill over device types (see backfill_policy.h).
#include "scheduler/policy/backfill_policy.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "scheduler/policy/placement.h"
#include "scheduler/policy/reservation.h"

namespace elastic::policy {
namespace {

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
    if (job.running()) AddReleases(cluster, job.allocation, job, job.expected_end_s, releases);
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
      AddReleases(cluster, *picked, *job, end_s, releases);
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
