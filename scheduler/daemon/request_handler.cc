// Request dispatch for elasticd.
#include "scheduler/daemon/request_handler.h"

#include "scheduler/daemon/protocol.h"

namespace elastic::daemon {
namespace {

bool Visible(const DaemonState& state, uid_t viewer, uid_t owner) {
  return viewer == owner || state.admin_uids.contains(viewer);
}

nlohmann::json JobJson(const JobRecord& job) {
  return {{"job_id", job.job_id}, {"uid", job.uid},          {"nodes", job.nodes},
          {"min_nodes", job.min_nodes}, {"max_nodes", job.max_nodes}, {"ests", job.ests},
          {"generation", job.generation}, {"plan", job.plan}, {"class", job.sla_class}};
}

std::string Status(const Authenticated& who, const DaemonState& state, std::int64_t now_unix) {
  nlohmann::json jobs = nlohmann::json::array();
  std::set<std::uint32_t> visible_ids;
  for (const JobRecord& job : state.jobs) {
    if (!Visible(state, who.uid, job.uid)) continue;
    jobs.push_back(JobJson(job));
    visible_ids.insert(job.job_id);
  }
  nlohmann::json decisions = nlohmann::json::array();
  for (const Decision& d : state.recent) {
    if (!visible_ids.contains(d.job_id)) continue;
    decisions.push_back({{"time", d.unix_time}, {"job_id", d.job_id}, {"action", d.action},
                         {"reason", d.reason}});
  }
  return OkResponse({{"version", state.version},
                     {"policy", state.policy},
                     {"uptime_s", now_unix - state.started_unix},
                     {"jobs", std::move(jobs)},
                     {"decisions", std::move(decisions)}});
}

}  // namespace

std::string HandleRequest(const Authenticated& who, DaemonState& state, std::int64_t now_unix) {
  if (!who.ok()) return ErrorResponse(who.error);
  DecodedRequest decoded = DecodeRequest(who.payload);
  if (!decoded.request) return ErrorResponse(decoded.error);
  switch (decoded.request->op) {
    case Op::kStatus: return Status(who, state, now_unix);
  }
  return ErrorResponse("unhandled op");
}

}  // namespace elastic::daemon
