// What elasticd knows and reports: its registry of elastic jobs and recent decisions.
// Plain data, owned by the daemon's single event-loop thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace elastic::daemon {

struct JobRecord {
  std::uint32_t job_id = 0;
  uid_t uid = 0;
  int nodes = 0;
  int min_nodes = 0;
  int max_nodes = 0;
  int ests = 0;
  std::uint64_t generation = 0;
  std::string plan = "auto";
  std::string sla_class = "best-effort";
};

struct Decision {
  std::int64_t unix_time = 0;
  std::uint32_t job_id = 0;
  std::string action;  // grow, shrink, keep
  std::string reason;
};

struct DaemonState {
  std::string version;
  std::string policy;
  std::int64_t started_unix = 0;
  std::set<uid_t> admin_uids{0};  // root, plus SlurmUser once known
  std::vector<JobRecord> jobs;
  std::deque<Decision> recent;    // newest last, bounded by kMaxRecentDecisions
  static constexpr std::size_t kMaxRecentDecisions = 100;
};

}  // namespace elastic::daemon
