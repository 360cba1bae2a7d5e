// Registry lookups and the bounded decision log.
#include "scheduler/daemon/daemon_state.h"

#include <algorithm>

namespace elastic::daemon {

JobRecord* DaemonState::Find(std::uint32_t job_id) {
  auto it = std::lower_bound(jobs.begin(), jobs.end(), job_id,
                             [](const JobRecord& j, std::uint32_t id) { return j.job_id < id; });
  return it != jobs.end() && it->job_id == job_id ? &*it : nullptr;
}

void DaemonState::Record(std::int64_t now, std::uint32_t job_id, std::string action,
                         std::string reason) {
  recent.push_back({now, job_id, std::move(action), std::move(reason)});
  ++decisions_total;
  while (recent.size() > kMaxRecentDecisions) recent.pop_front();
}

}  // namespace elastic::daemon
