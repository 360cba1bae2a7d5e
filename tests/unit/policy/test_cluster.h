// Test helper: Slurm views of identical nodes, running jobs on them and registered elastic jobs,
// shared by the resize decision's tests (tests/unit/resize) and the live policy's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/policy/resize_decision.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

// Nodes n1..n<count> of partition "main" at `now`, all available and idle, `cpus` CPUs and
// `devices` devices (GPUs; 1 = CPU nodes) each.
inline SlurmView TestCluster(int count, std::int64_t now, int cpus = 4, int devices = 1) {
  SlurmView view;
  view.now = now;
  for (int i = 1; i <= count; ++i) {
    SlurmNode node;
    node.name = "n" + std::to_string(i);
    node.partitions = {"main"};
    node.cpus = cpus;
    node.devices = devices;
    node.available = true;
    view.nodes.push_back(node);
  }
  return view;
}

// Job `id` running in "main" on `nodes` (batch host the first), started an hour before
// view.now; its nodes in `view` become fully allocated. The caller adds it to view.jobs.
inline SlurmJob RunningOn(std::uint32_t id, std::vector<std::string> nodes, SlurmView& view) {
  for (SlurmNode& n : view.nodes) {
    if (std::find(nodes.begin(), nodes.end(), n.name) != nodes.end()) n.alloc_cpus = n.cpus;
  }
  SlurmJob job;
  job.job_id = id;
  job.partition = "main";
  job.state = SlurmJobState::kRunning;
  job.nodes = nodes;
  job.batch_host = nodes.front();
  job.min_nodes = static_cast<int>(nodes.size());
  job.start_time = view.now - 3600;
  return job;
}

// Job `id` pending in "main" for `min_nodes` nodes with Slurm's `reason` ("Resources",
// "Priority", ...). The caller adds it to view.jobs.
inline SlurmJob PendingIn(std::uint32_t id, int min_nodes, std::string reason = "Resources") {
  SlurmJob job;
  job.job_id = id;
  job.partition = "main";
  job.state = SlurmJobState::kPending;
  job.min_nodes = min_nodes;
  job.reason = std::move(reason);
  return job;
}

// elasticd's registry record of job `id` with bounds MIN-MAX nodes.
inline ElasticJob Registered(std::uint32_t id, int min, int max, int ests = 8) {
  ElasticJob job;
  job.job_id = id;
  job.min_nodes = min;
  job.max_nodes = max;
  job.ests = ests;
  return job;
}

}  // namespace elastic::policy
