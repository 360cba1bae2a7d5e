// Rendering a replay: one-screen summary, JSON (design.md §2 keys) and an SVG timeline.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/sim/simulator.h"

namespace elastic::sim {

struct RunInfo {  // what was replayed, echoed into the JSON
  std::string trace;
  std::string cluster;
  std::uint64_t seed = 1;
};

std::string Summary(const SimResult& result);
// Keys: policy, trace, cluster, seed, jobs (array), avg_jct_s, p99_jct_s, makespan_s,
// gpu_utilization, gpu_utilization_submission, gpu_utilization_queued, queued_s,
// cpu_utilization, avg_queue_s, total_devices, events, policy_calls, job_count.
nlohmann::json ToJson(const SimResult& result, const RunInfo& info);
// One row per job (trace order), a bar per allocation segment, darker = more devices.
std::string TimelineSvg(const SimResult& result);

}  // namespace elastic::sim
