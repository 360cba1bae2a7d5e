// Seeded random traces for the simulator's property tests: mostly 1-GPU jobs, some up to 8
// GPUs, submitted up to 5 minutes apart, running 10 s to 50 min; and job ids of a chosen class.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "scheduler/sim/trace.h"
#include "scheduler/sim/workload.h"

namespace elastic::sim {

inline std::vector<TraceJob> RandomTrace(std::uint64_t seed, int jobs) {
  std::mt19937_64 rng(seed);
  const int sizes[] = {1, 1, 1, 2, 4, 8};
  std::vector<TraceJob> trace;
  std::int64_t submit = 0;
  for (int i = 0; i < jobs; ++i) {
    submit += static_cast<std::int64_t>(rng() % 300);
    TraceJob job;
    job.id = "j" + std::to_string(i);
    job.submit_time_s = submit;
    job.gpus = sizes[rng() % 6];
    job.duration_s = 10 + static_cast<std::int64_t>(rng() % 3000);
    trace.push_back(job);
  }
  return trace;
}

// The first id `prefix`<k> in the wanted SLA class (classes are a hash of the id).
inline std::string IdOfClass(const std::string& prefix, bool guaranteed,
                             const SimOptions& options) {
  for (int k = 0;; ++k) {
    TraceJob row;
    row.id = prefix + std::to_string(k);
    if (IsGuaranteed(row, options) == guaranteed) return row.id;
  }
}

}  // namespace elastic::sim
