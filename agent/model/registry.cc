// The table of built-in models; add a row to add a model.
#include "agent/model/registry.h"

#include <array>
#include <string>

#include "agent/common/errors.h"
#include "agent/model/fmnist_cnn.h"
#include "agent/model/gpt.h"

namespace elastic::agent {
namespace {

struct ModelEntry {
  std::string_view name;
  std::shared_ptr<Model> (*make)();
  DatasetKind data;
};

constexpr std::array<ModelEntry, 2> kModels{{
    {"fmnist_cnn", []() -> std::shared_ptr<Model> { return std::make_shared<FmnistCnn>(); },
     DatasetKind::kFashionMnist},
    {"gpt", []() -> std::shared_ptr<Model> { return std::make_shared<Gpt>(); },
     DatasetKind::kTextCorpus},
}};

}  // namespace

bool IsKnownModel(std::string_view name) {
  for (const ModelEntry& entry : kModels) {
    if (entry.name == name) return true;
  }
  return false;
}

std::string_view KnownModelNames() {
  static const std::string names = [] {
    std::string joined;
    for (const ModelEntry& entry : kModels) {
      joined += (joined.empty() ? "" : ", ") + std::string(entry.name);
    }
    return joined;
  }();
  return names;
}

std::shared_ptr<Model> MakeModel(std::string_view name) {
  for (const ModelEntry& entry : kModels) {
    if (entry.name == name) return entry.make();
  }
  throw TrainingError("unknown model \"" + std::string(name) + "\": expected one of " +
                      std::string(KnownModelNames()));
}

DatasetKind DatasetOf(std::string_view name) {
  for (const ModelEntry& entry : kModels) {
    if (entry.name == name) return entry.data;
  }
  throw TrainingError("unknown model \"" + std::string(name) + "\": expected one of " +
                      std::string(KnownModelNames()));
}

}  // namespace elastic::agent
