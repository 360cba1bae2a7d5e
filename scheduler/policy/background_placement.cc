// PlanBackground: background jobs only on foreground nodes, and who gives way (DeepPool §5).
#include "scheduler/policy/background_placement.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace elastic::policy {
namespace {

// Nodes some foreground job holds and is not leaving.
std::set<std::string> HostNodes(const SlurmView& view, const std::vector<ForegroundJob>& foreground,
                                const std::string& partition) {
  std::map<std::uint32_t, const SlurmJob*> running;
  for (const SlurmJob& job : view.jobs) {
    if (job.state == SlurmJobState::kRunning && job.partition != partition) {
      running[job.job_id] = &job;
    }
  }
  std::set<std::string> hosts;
  for (const ForegroundJob& fg : foreground) {
    if (!running.contains(fg.job_id)) continue;
    for (const std::string& node : fg.nodes) {
      if (std::find(fg.leaving.begin(), fg.leaving.end(), node) == fg.leaving.end()) {
        hosts.insert(node);
      }
    }
  }
  return hosts;
}

// Nodes of waiting (non-background) jobs' planned starts: Slurm's plan needs them.
std::map<std::string, std::uint32_t> PlannedNodes(const SlurmView& view,
                                                  const std::string& partition) {
  std::map<std::string, std::uint32_t> planned;
  for (const SlurmJob& job : view.jobs) {
    if (!WaitsForNodes(job) || job.partition == partition) continue;
    for (const std::string& node : job.sched_nodes) planned.emplace(node, job.job_id);
  }
  return planned;
}

struct Candidate {
  GiveWay give_way;
  std::int64_t start_time = 0;
};

}  // namespace

const char* ToString(GiveWayCause cause) {
  switch (cause) {
    case GiveWayCause::kNeededByPendingJob: return "needed-by-pending-job";
    case GiveWayCause::kNoForegroundJob: return "no-foreground-job";
    case GiveWayCause::kOverFactor: return "over-factor";
  }
  return "unknown";
}

BackgroundPlan PlanBackground(const SlurmView& view, const std::vector<ForegroundJob>& foreground,
                              const BackgroundOptions& options) {
  BackgroundPlan plan;
  if (options.partition.empty()) return plan;
  const std::set<std::string> hosts = HostNodes(view, foreground, options.partition);
  const std::map<std::string, std::uint32_t> planned = PlannedNodes(view, options.partition);

  std::vector<Candidate> leaving;
  // Per foreground node, the background jobs that stay there: (start time, job id).
  std::map<std::string, std::vector<std::pair<std::int64_t, std::uint32_t>>> staying;
  for (const SlurmJob& job : view.jobs) {
    if (job.state != SlurmJobState::kRunning || job.partition != options.partition) continue;
    const std::string* off_host = nullptr;
    for (const std::string& node : job.nodes) {
      if (!hosts.contains(node)) { off_host = &node; break; }
    }
    if (off_host == nullptr) {
      for (const std::string& node : job.nodes) staying[node].emplace_back(job.start_time, job.job_id);
      continue;
    }
    Candidate c{{job.job_id, *off_host, GiveWayCause::kNoForegroundJob, ""}, job.start_time};
    auto plan_it = planned.find(*off_host);
    if (plan_it != planned.end()) {
      c.give_way.cause = GiveWayCause::kNeededByPendingJob;
      c.give_way.reason = "node " + *off_host + " is in waiting job " +
                          std::to_string(plan_it->second) +
                          "'s planned start and runs no foreground elastic job";
    } else {
      c.give_way.reason = "node " + *off_host +
                          " runs no foreground elastic job (it ended or is shrinking away)";
    }
    leaving.push_back(std::move(c));
  }

  // Over the factor: the earliest started keep their place, the rest give way (once per job).
  std::set<std::uint32_t> over;
  std::map<std::string, int> kept_on;
  for (auto& [node, jobs] : staying) {
    std::sort(jobs.begin(), jobs.end());
    int kept = 0;
    for (const auto& [start, job_id] : jobs) {
      if (over.contains(job_id)) continue;
      if (kept < options.max_per_node) { ++kept; continue; }
      over.insert(job_id);
      Candidate c{{job_id, node, GiveWayCause::kOverFactor,
                   "node " + node + " has more than " + std::to_string(options.max_per_node) +
                       " background job(s)"},
                  start};
      leaving.push_back(std::move(c));
    }
  }
  for (const auto& [node, jobs] : staying) {
    for (const auto& [start, job_id] : jobs) {
      if (!over.contains(job_id)) ++kept_on[node];
    }
  }

  std::sort(leaving.begin(), leaving.end(), [](const Candidate& a, const Candidate& b) {
    return std::make_tuple(static_cast<int>(a.give_way.cause), -a.start_time, a.give_way.job_id) <
           std::make_tuple(static_cast<int>(b.give_way.cause), -b.start_time, b.give_way.job_id);
  });
  for (Candidate& c : leaving) plan.give_way.push_back(std::move(c.give_way));

  std::vector<std::string> current;
  for (const SlurmNode& node : view.nodes) {
    const bool member = std::find(node.partitions.begin(), node.partitions.end(),
                                  options.partition) != node.partitions.end();
    if (member) current.push_back(node.name);
    if (!hosts.contains(node.name) || !node.available || planned.contains(node.name)) continue;
    if (kept_on[node.name] >= options.max_per_node) continue;
    plan.partition_nodes.push_back(node.name);
  }
  std::sort(current.begin(), current.end());
  plan.partition_changed = current != plan.partition_nodes;
  return plan;
}

}  // namespace elastic::policy
