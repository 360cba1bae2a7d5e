// AdminComment summary: formatting (the bounds parser is protocol/node_bounds.h).
#include "scheduler/daemon/admin_comment.h"

namespace elastic::daemon {

std::string ShownPlan(const JobRecord& job) {
  return job.running_plan.empty() ? job.plan : job.running_plan;
}

int ShownDevices(const JobRecord& job) { return job.devices > job.node_count() ? job.devices : 0; }

std::string FormatAdminComment(const JobRecord& job) {
  std::string text = "elastic:est=" + std::to_string(job.ests) +
                     ",nodes=" + std::to_string(job.node_count()) + "/" +
                     std::to_string(job.min_nodes) + "-" + std::to_string(job.max_nodes) +
                     ",plan=" + ShownPlan(job) + ",gen=" + std::to_string(job.generation) +
                     ",class=" + job.sla_class + ",last=" + std::to_string(job.last_resize_unix);
  if (!job.quota.empty()) text += ",quota=" + job.quota;  // guaranteed jobs only
  // Last, and only on multi-device nodes, so checks matching the CPU-node text keep matching.
  if (const int devices = ShownDevices(job); devices > 0) {
    text += ",devices=" + std::to_string(devices);
  }
  return text;
}

}  // namespace elastic::daemon
