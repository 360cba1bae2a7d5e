// Shared set-up of the request handler's tests: a call as an authenticated uid, job records, and
// Slurm's view of job 11 (request_handler_test.cc, request_handler_validation_test.cc).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/daemon/request_handler.h"

namespace elastic::daemon::test {

inline nlohmann::json Call(DaemonState& state, uid_t uid, const std::string& payload,
                    const JobLookup& lookup = {}) {
  Authenticated who;
  who.uid = uid;
  who.gid = uid;
  who.payload = payload;
  return nlohmann::json::parse(HandleRequest(who, state, 1'000, lookup));
}

inline JobRecord Job(std::uint32_t id, uid_t uid, std::vector<std::string> nodes, int min, int max) {
  JobRecord job;
  job.job_id = id;
  job.uid = uid;
  job.nodes = std::move(nodes);
  job.min_nodes = min;
  job.max_nodes = max;
  job.bounds_known = true;
  return job;
}

// Slurm's view of job `id` of `uid`: running on n1, with the job_submit.lua bounds record.
inline policy::SlurmJob RunningSlurmJob(std::uint32_t id, uid_t uid) {
  policy::SlurmJob job;
  job.job_id = id;
  job.uid = uid;
  job.state = policy::SlurmJobState::kRunning;
  job.nodes = {"n1"};
  job.batch_host = "n1";
  job.partition = "main";
  job.admin_comment = "elastic:nodes=0/1-4";
  job.elastic = true;  // the record slurm_records reads
  return job;
}

// Slurm knows job 11 only, of uid 1001.
inline std::optional<policy::SlurmJob> SlurmJob11(std::uint32_t id) {
  if (id != 11) return std::nullopt;
  return RunningSlurmJob(11, 1001);
}

inline DaemonState StateWithTwoUsers() {
  DaemonState state;
  state.version = "9.9";
  state.policy = "elastic";
  state.started_unix = 900;
  state.jobs.push_back(Job(11, 1001, {"n1", "n2"}, 1, 4));
  state.jobs.push_back(Job(12, 1002, {"n3", "n4", "n5"}, 2, 3));
  state.recent.push_back({.unix_time = 950, .job_id = 11, .action = "grow", .reason = "idle"});
  state.recent.push_back({.unix_time = 960, .job_id = 12, .action = "shrink", .reason = "p"});
  return state;
}

}  // namespace elastic::daemon::test
