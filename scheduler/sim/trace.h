// Workload traces in the common CSV format (../shared/data/traces/README.md):
// job_id,submit_time_s,num_gpus,duration_s[,extra columns...], integer seconds, one header line.
// Errors name file:line, the column, the value and what was expected. Not thread-safe to share.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "common/result.h"

namespace elastic::sim {

struct TraceJob {
  std::string id;
  std::int64_t submit_time_s = 0;
  int gpus = 1;
  std::int64_t duration_s = 1;  // run time at `gpus` on the trace's reference devices
  std::string tenant;           // the `vc` column when present
};

// The jobs sorted by submit time (stable). `name` only labels errors. Reads the whole stream.
Result<std::vector<TraceJob>> ParseTrace(std::istream& in, const std::string& name);
Result<std::vector<TraceJob>> LoadTrace(const std::string& path);

}  // namespace elastic::sim
