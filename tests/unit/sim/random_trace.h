// Seeded random traces for the simulator's property tests: mostly 1-GPU jobs, some up to 8
// GPUs, submitted up to 5 minutes apart, running 10 s to 50 min.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "scheduler/sim/trace.h"

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

}  // namespace elastic::sim
