// The table of built-in model names and their datasets; agent/model/registry.cc builds each.
#include "agent/config/model_catalog.h"

#include <array>
#include <string>

#include "agent/common/errors.h"

namespace elastic::agent {
namespace {

struct CatalogEntry {
  std::string_view name;
  DatasetKind data;
};

constexpr std::array<CatalogEntry, 2> kCatalog{{
    {"fmnist_cnn", DatasetKind::kFashionMnist},
    {"gpt", DatasetKind::kTextCorpus},
}};

}  // namespace

bool IsKnownModel(std::string_view name) {
  for (const CatalogEntry& entry : kCatalog) {
    if (entry.name == name) return true;
  }
  return false;
}

std::string_view KnownModelNames() {
  static const std::string names = [] {
    std::string joined;
    for (const CatalogEntry& entry : kCatalog) {
      joined += (joined.empty() ? "" : ", ") + std::string(entry.name);
    }
    return joined;
  }();
  return names;
}

std::string_view ToString(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kFashionMnist:
      return "fashion-mnist";
    case DatasetKind::kTextCorpus:
      return "text";
    case DatasetKind::kTensors:
      return "tensors";
  }
  return "?";
}

std::optional<DatasetKind> ParseDatasetKind(std::string_view word) {
  for (DatasetKind kind :
       {DatasetKind::kFashionMnist, DatasetKind::kTextCorpus, DatasetKind::kTensors}) {
    if (ToString(kind) == word) return kind;
  }
  return std::nullopt;
}

DatasetKind DatasetOf(std::string_view name) {
  for (const CatalogEntry& entry : kCatalog) {
    if (entry.name == name) return entry.data;
  }
  throw TrainingError("unknown model \"" + std::string(name) + "\": expected one of " +
                      std::string(KnownModelNames()));
}

}  // namespace elastic::agent
