// QuotaStanding: guaranteed jobs' claims on their account's quota, oldest first.
#include "scheduler/policy/sla_quota.h"

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <vector>

namespace elastic::policy {
namespace {

// Devices per node, and the smallest node of each partition, read once per call: a guaranteed
// job's claim then costs its own nodes, not a scan of the cluster.
struct NodeDevices {
  std::unordered_map<std::string, int> of_node;  // looked up, never iterated
  std::map<std::string, int> smallest_in_partition;

  explicit NodeDevices(const SlurmView& view) {
    for (const SlurmNode& node : view.nodes) {
      const int devices = std::max(node.devices, 1);
      of_node[node.name] = devices;
      for (const std::string& partition : node.partitions) {
        auto [it, fresh] = smallest_in_partition.emplace(partition, devices);
        if (!fresh) it->second = std::min(it->second, devices);
      }
    }
  }

  // A running job's smallest node; a waiting one's partition's; 1 when unknown.
  int SmallestFor(const SlurmJob& job) const {
    int smallest = INT_MAX;
    if (job.state == SlurmJobState::kRunning) {
      for (const std::string& name : job.nodes) {
        auto it = of_node.find(name);
        if (it != of_node.end()) smallest = std::min(smallest, it->second);
      }
    } else if (auto it = smallest_in_partition.find(job.partition);
               it != smallest_in_partition.end()) {
      smallest = it->second;
    }
    return smallest == INT_MAX ? 1 : smallest;
  }
};

int MinimumDevices(const NodeDevices& devices, const SlurmJob& job,
                   const std::map<std::uint32_t, int>& min_nodes) {
  int nodes = std::max(job.min_nodes, 1);
  if (job.state == SlurmJobState::kRunning) {
    auto it = min_nodes.find(job.job_id);
    nodes = it != min_nodes.end() ? it->second : static_cast<int>(job.nodes.size());
  }
  return std::max(nodes, 1) * devices.SmallestFor(job);
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
  const std::vector<const SlurmJob*> order = ClaimOrder(view);
  if (order.empty()) return standing;  // most clusters: no guaranteed job, no node table
  std::map<std::string, long long> claimed;
  const NodeDevices devices(view);
  for (const SlurmJob* job : order) {
    if (!quotas) {
      standing[job->job_id] = true;
      continue;
    }
    auto quota = quotas->find(job->account);
    const long long limit = quota == quotas->end() ? 0 : quota->second;
    const long long claim = claimed[job->account] + MinimumDevices(devices, *job, min_nodes);
    standing[job->job_id] = claim <= limit;
    if (claim <= limit) claimed[job->account] = claim;  // a job over quota claims nothing
  }
  return standing;
}

}  // namespace elastic::policy
