// QuotaStanding: guaranteed jobs' claims on their account's quota, oldest first.
#include "scheduler/policy/sla_quota.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace elastic::policy {
namespace {

int SmallestNode(const SlurmView& view, const SlurmJob& job) {
  int smallest = INT_MAX;
  for (const SlurmNode& node : view.nodes) {
    const bool mine = job.state == SlurmJobState::kRunning
                          ? std::binary_search(job.nodes.begin(), job.nodes.end(), node.name)
                          : std::find(node.partitions.begin(), node.partitions.end(),
                                      job.partition) != node.partitions.end();
    if (mine) smallest = std::min(smallest, std::max(node.devices, 1));
  }
  return smallest == INT_MAX ? 1 : smallest;
}

int MinimumDevices(const SlurmView& view, const SlurmJob& job,
                   const std::map<std::uint32_t, int>& min_nodes) {
  int nodes = std::max(job.min_nodes, 1);
  if (job.state == SlurmJobState::kRunning) {
    auto it = min_nodes.find(job.job_id);
    nodes = it != min_nodes.end() ? it->second : static_cast<int>(job.nodes.size());
  }
  return std::max(nodes, 1) * SmallestNode(view, job);
}

// Running guaranteed jobs by start time, then waiting ones by Slurm's priority.
std::vector<const SlurmJob*> ClaimOrder(const SlurmView& view) {
  std::vector<const SlurmJob*> running, waiting;
  for (const SlurmJob& job : view.jobs) {
    if (job.sla_class != SlaClass::kGuaranteed) continue;
    if (job.state == SlurmJobState::kRunning) running.push_back(&job);
    if (WaitsForNodes(job)) waiting.push_back(&job);
  }
  std::stable_sort(running.begin(), running.end(), [](const SlurmJob* a, const SlurmJob* b) {
    return a->start_time != b->start_time ? a->start_time < b->start_time : a->job_id < b->job_id;
  });
  std::stable_sort(waiting.begin(), waiting.end(), [](const SlurmJob* a, const SlurmJob* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->job_id < b->job_id;
  });
  running.insert(running.end(), waiting.begin(), waiting.end());
  return running;
}

}  // namespace

std::map<std::uint32_t, bool> QuotaStanding(
    const SlurmView& view, const std::map<std::uint32_t, int>& min_nodes,
    const std::optional<std::map<std::string, int>>& quotas) {
  std::map<std::uint32_t, bool> standing;
  std::map<std::string, long long> claimed;
  for (const SlurmJob* job : ClaimOrder(view)) {
    if (!quotas) {
      standing[job->job_id] = true;
      continue;
    }
    auto quota = quotas->find(job->account);
    const long long limit = quota == quotas->end() ? 0 : quota->second;
    const long long claim = claimed[job->account] + MinimumDevices(view, *job, min_nodes);
    standing[job->job_id] = claim <= limit;
    if (claim <= limit) claimed[job->account] = claim;  // a job over quota claims nothing
  }
  return standing;
}

}  // namespace elastic::policy
