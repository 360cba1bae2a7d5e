// The agent's check of a job's training data (JobConfig's DataCheck, agent/config/job_config.h):
// data.path holds the dataset its model reads. In data/, not config/, so that the job config
// stays below the data loaders (docs/architecture.md).
#pragma once

#include "agent/config/job_config.h"
#include "common/toml_reader.h"

namespace elastic::agent {

// Fails through `reader` (naming data.path or data.augment, the value and what is expected)
// when data.path is not the dataset config.model.name reads.
void CheckTrainingData(TomlReader& reader, const JobConfig& config);

}  // namespace elastic::agent
