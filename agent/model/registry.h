// Built-in models by name (config key model.name); the names and datasets are the catalog's
// (agent/config/model_catalog.h). MakeModel's result needs "agent/model/model.h" to be used.
#pragma once

#include <memory>
#include <string_view>

#include "agent/config/job_config.h"
#include "agent/config/model_catalog.h"

namespace elastic::agent {

class Model;

// A freshly initialised model; its initial weights come from LibTorch's default generator, so
// seed that first. Throws TrainingError for an unknown name (config validation prevents it).
std::shared_ptr<Model> MakeModel(std::string_view name);

// The job's model: the user's TorchScript module (model.torchscript, its own weights; throws
// ConfigError for a file that is not one) or the built-in model.name (weights from the default
// generator, as MakeModel).
std::shared_ptr<Model> MakeJobModel(const JobConfig& config);

}  // namespace elastic::agent
