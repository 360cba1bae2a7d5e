// The built-in models' names and datasets (config key model.name): torch-free, so the job config
// validates a name without LibTorch; agent/model/registry.h builds the models themselves.
#pragma once

#include <optional>
#include <string_view>

namespace elastic::agent {

// The training data a model reads from data.path (docs/plans.md, "Models and data").
enum class DatasetKind {
  kFashionMnist,  // IDX files of Debian's dataset-fashion-mnist (agent/data/dataset.h)
  kTextCorpus,    // byte windows over Debian's fortunes-min (agent/data/text_corpus.h)
  kTensors,       // a user's torch.save shards (agent/data/tensor_shards.h)
};

// data.format's words: "fashion-mnist", "text", "tensors".
std::string_view ToString(DatasetKind kind);
// The kind `word` names, or nullopt for another word.
std::optional<DatasetKind> ParseDatasetKind(std::string_view word);

bool IsKnownModel(std::string_view name);
// Comma-separated names, for error messages and --help.
std::string_view KnownModelNames();
// The data model `name` trains on. Throws TrainingError for an unknown name.
DatasetKind DatasetOf(std::string_view name);

}  // namespace elastic::agent
