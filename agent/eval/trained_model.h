// The job's model as its newest checkpoint left it (parameters and EST 0's buffers), for the
// commands that use a trained model: eval and export. Includes LibTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>

#include "agent/config/job_config.h"
#include "agent/model/model.h"

namespace elastic::agent {

struct TrainedModel {
  std::shared_ptr<Model> model;  // on the CPU, in eval mode
  std::filesystem::path checkpoint;
  std::int64_t step = 0;
};

// The newest valid checkpoint of checkpoint.dir (corrupt newer ones are skipped with a warning
// to `err`) loaded into a fresh model of the config. Calls ConfigureTorchRuntime. Throws
// ConfigError when checkpoint.dir is unset or the checkpoint is of another model (its name or
// any parameter's or buffer's shape), CheckpointError when there is no valid checkpoint or its
// "params" record does not load.
// `command` ("eval", "export") and `purpose` ("evaluate", "export") word the errors.
TrainedModel LoadTrainedModel(const JobConfig& config, std::ostream& err,
                              const std::string& command, const std::string& purpose);

}  // namespace elastic::agent
