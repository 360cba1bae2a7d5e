// ChooseNiceLifts: the waiting elastic jobs whose job_submit.lua nice has lasted long enough
// (see nice_lift.h).
#include "scheduler/policy/nice_lift.h"

#include <sstream>

namespace elastic::policy {
namespace {

bool StillYields(const SlurmJob& job, std::int64_t elastic_nice) {
  return job.elastic && job.sla_class != SlaClass::kBackground && WaitsForNodes(job) &&
         job.nice >= elastic_nice && job.nice < 2 * elastic_nice;
}

// 6 as "6", 2.5 as "2.5": the multiple as the administrator wrote it.
std::string Multiple(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::vector<NiceLift> ChooseNiceLifts(const SlurmView& view, const NiceLiftOptions& options) {
  std::vector<NiceLift> lifts;
  if (options.after_time_limits <= 0 || options.elastic_nice <= 0) return lifts;
  for (const SlurmJob& job : view.jobs) {
    if (!StillYields(job, options.elastic_nice) || job.time_limit_s <= 0) continue;
    const std::int64_t waited = view.now - job.submit_time;
    const double bound = options.after_time_limits * static_cast<double>(job.time_limit_s);
    if (static_cast<double>(waited) < bound) continue;
    lifts.push_back({job.job_id, job.nice - options.elastic_nice,
                     "waited " + std::to_string(waited) + " s, at least " +
                         std::to_string(static_cast<std::int64_t>(bound)) + " s (" +
                         Multiple(options.after_time_limits) + " x its time limit of " +
                         std::to_string(job.time_limit_s) + " s) behind the rigid queue"});
  }
  return lifts;
}

}  // namespace elastic::policy
