// data.path checked against the job's model before anything trains (the agent's DataCheck).
#include "agent/data/dataset_checks.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "agent/config/model_catalog.h"
#include "agent/config/quoted.h"
#include "agent/data/fashion_mnist_files.h"
#include "agent/data/shard_files.h"
#include "agent/data/text_corpus.h"

namespace elastic::agent {
namespace {

// The gpt model's corpus (text_corpus.h): the fortunes-min files in data.path.
void CheckTextCorpus(TomlReader& reader, const JobConfig& c) {
  std::error_code error;
  if (!std::filesystem::is_directory(c.data.path, error)) {
    reader.Fail("data.path", Quoted(c.data.path) +
                                 " is not a directory: expected the fortune files of model " +
                                 Quoted(ModelLabel(c)) +
                                 "'s text corpus (install the Debian package fortunes-min: "
                                 "/usr/share/games/fortunes)");
  }
  if (auto missing = MissingCorpusFile(c.data.path)) {
    reader.Fail("data.path", Quoted(c.data.path) + " has no file " + Quoted(*missing) +
                                 ": expected the fortunes-min corpus (install the Debian "
                                 "package fortunes-min)");
  }
  if (c.data.augment != Augment::kNone) {
    reader.Fail("data.augment", Quoted(ToString(c.data.augment)) + " mirrors images: model " +
                                    Quoted(ModelLabel(c)) + " reads text; expected \"none\"");
  }
}

// A user's shards (tensor_shards.h): the directory and its train*.pt files; what is in them is
// checked when they load, before the first step.
void CheckTensorShards(TomlReader& reader, const JobConfig& c) {
  std::error_code error;
  if (!std::filesystem::is_directory(c.data.path, error)) {
    reader.Fail("data.path", Quoted(c.data.path) +
                                 " is not a directory: expected the directory of train*.pt "
                                 "shards (data.format = \"tensors\")");
  }
  if (ShardFiles(c.data.path, "train").empty()) {
    reader.Fail("data.path", Quoted(c.data.path) +
                                 " has no train*.pt file: expected shards written by "
                                 "torch.save({\"inputs\": ..., \"targets\": ...}, FILE)");
  }
}

}  // namespace

void CheckTrainingData(TomlReader& reader, const JobConfig& c) {
  if (c.data.format == DatasetKind::kTextCorpus) {
    CheckTextCorpus(reader, c);
    return;
  }
  if (c.data.format == DatasetKind::kTensors) {
    CheckTensorShards(reader, c);
    return;
  }
  std::error_code error;
  if (!std::filesystem::is_directory(c.data.path, error)) {
    reader.Fail("data.path", Quoted(c.data.path) +
                                 " is not a directory: expected the "
                                 "Fashion-MNIST directory (Debian package dataset-fashion-mnist)");
  }
  std::string missing;
  if (!FindSplitFiles(c.data.path, Split::kTrain, &missing)) {
    reader.Fail("data.path", Quoted(c.data.path) + " has no " + missing +
                                 ": expected the Fashion-MNIST IDX files");
  }
}

}  // namespace elastic::agent
