// The table of built-in models' constructors; add a row here and one to the catalog
// (agent/config/model_catalog.cc) to add a model.
#include "agent/model/registry.h"

#include <array>
#include <string>

#include "agent/common/errors.h"
#include "agent/model/fmnist_cnn.h"
#include "agent/model/gpt.h"
#include "agent/model/torchscript_model.h"

namespace elastic::agent {
namespace {

struct ModelEntry {
  std::string_view name;
  std::shared_ptr<Model> (*make)();
};

constexpr std::array<ModelEntry, 2> kModels{{
    {"fmnist_cnn", []() -> std::shared_ptr<Model> { return std::make_shared<FmnistCnn>(); }},
    {"gpt", []() -> std::shared_ptr<Model> { return std::make_shared<Gpt>(); }},
}};

}  // namespace

std::shared_ptr<Model> MakeModel(std::string_view name) {
  for (const ModelEntry& entry : kModels) {
    if (entry.name == name) return entry.make();
  }
  throw TrainingError("unknown model \"" + std::string(name) + "\": expected one of " +
                      std::string(KnownModelNames()));
}

std::shared_ptr<Model> MakeJobModel(const JobConfig& config) {
  if (!config.model.torchscript.empty()) {
    return std::make_shared<TorchScriptModel>(config.model.torchscript);
  }
  return MakeModel(config.model.name);
}

}  // namespace elastic::agent
