// Built-in models by name (config key model.name). The header is torch-free so the job config
// can validate names cheaply; MakeModel's result needs "agent/model/model.h" to be used.
#pragma once

#include <memory>
#include <string_view>

namespace elastic::agent {

class Model;

// The training data a model reads from data.path (docs/plans.md, "Models and data").
enum class DatasetKind {
  kFashionMnist,  // IDX files of Debian's dataset-fashion-mnist (agent/data/dataset.h)
  kTextCorpus,    // byte windows over Debian's fortunes-min (agent/data/text_corpus.h)
};

bool IsKnownModel(std::string_view name);
// Comma-separated names, for error messages and --help.
std::string_view KnownModelNames();
// A freshly initialised model; its initial weights come from LibTorch's default generator, so
// seed that first. Throws TrainingError for an unknown name (config validation prevents it).
std::shared_ptr<Model> MakeModel(std::string_view name);
// The data model `name` trains on. REQUIRES: IsKnownModel(name).
DatasetKind DatasetOf(std::string_view name);

}  // namespace elastic::agent
