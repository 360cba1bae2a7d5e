// Slurm views and registry calls built by hand for the RunCycle tests (daemon_cycle_test.cc,
// regrow_test.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/daemon/daemon_cycle.h"
#include "scheduler/daemon/request_handler.h"

namespace elastic::daemon {

inline constexpr uid_t kOwner = 1001;

// Slurm's view at `now`: nodes n1..n4 of partition main (`devices` GPUs each, 1 = CPU nodes),
// job 11 of kOwner running on `nodes` with the job_submit.lua record for bounds 1-4.
inline policy::SlurmView View(std::int64_t now, std::vector<std::string> nodes, int devices = 1) {
  policy::SlurmView view;
  view.now = now;
  for (const char* name : {"n1", "n2", "n3", "n4"}) {
    policy::SlurmNode node;
    node.name = name;
    node.partitions = {"main"};
    node.cpus = 8;
    node.devices = devices;
    node.alloc_cpus = std::find(nodes.begin(), nodes.end(), name) != nodes.end() ? 8 : 0;
    node.available = true;
    view.nodes.push_back(node);
  }
  policy::SlurmJob job;
  job.job_id = 11;
  job.uid = kOwner;
  job.state = policy::SlurmJobState::kRunning;
  job.nodes = std::move(nodes);
  job.batch_host = "n1";
  job.partition = "main";
  job.min_nodes = static_cast<int>(job.nodes.size());
  job.admin_comment = "elastic:nodes=0/1-4";
  job.elastic = true;  // the record slurm_records reads
  view.jobs.push_back(job);
  return view;
}

// Job `id` pending in partition main for `min_nodes` nodes, waiting for `reason`.
inline policy::SlurmJob PendingJob(std::uint32_t id, int min_nodes, const std::string& reason) {
  policy::SlurmJob job;
  job.job_id = id;
  job.state = policy::SlurmJobState::kPending;
  job.reason = reason;
  job.partition = "main";
  job.min_nodes = min_nodes;
  return job;
}

inline nlohmann::json Call(DaemonState& state, std::int64_t now, const nlohmann::json& request,
                           const policy::SlurmView& view, uid_t uid = kOwner) {
  Authenticated who;
  who.uid = uid;
  who.gid = uid;
  who.payload = request.dump();
  return nlohmann::json::parse(HandleRequest(who, state, now, [&view](std::uint32_t id) {
    return id == view.jobs[0].job_id ? std::optional(view.jobs[0]) : std::nullopt;
  }));
}

// Observe-only cycles: the resize decision's own choices are not what these tests are about.
inline CycleOptions Observe() {
  CycleOptions options;
  options.resize = false;
  return options;
}

}  // namespace elastic::daemon
