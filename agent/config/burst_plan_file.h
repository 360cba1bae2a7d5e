// train.burst_plan: the GPU count of every layer of an `elastic-plan burst --json` plan
// (docs/burst-planner.md), read as train.burst_workers. Its layers must be the model's blocks, in
// order (checked against the model when training starts), and a chain (no branch on GPUs of its
// own). Errors go through `reader` (ConfigError naming the file, train.burst_plan and the layer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/toml_reader.h"

namespace elastic::agent {

// Each layer's "gpus" (1..max_count) from the plan in `path`.
std::vector<std::int64_t> ReadBurstPlanFile(TomlReader& reader, const std::string& path,
                                           std::int64_t max_count);

}  // namespace elastic::agent
