// LoadTrainedModel: newest checkpoint, fingerprint check, "params" record into a fresh model.
#include "agent/eval/trained_model.h"

#include <torch/torch.h>

#include <optional>
#include <ostream>

#include "agent/checkpoint/checkpoint_dir.h"
#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/common/shape_text.h"
#include "agent/model/registry.h"
#include "agent/train/trainer.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

CheckpointReader NewestCheckpoint(const JobConfig& config, std::ostream& err,
                                  const std::string& command, const std::string& purpose) {
  if (config.checkpoint.dir.empty()) {
    throw ConfigError(command + ": checkpoint.dir is not set: no checkpoint to " + purpose);
  }
  std::optional<CheckpointReader> checkpoint =
      FindNewestValid(config.checkpoint.dir, [&](const std::string& message) {
        err << "elastic-agent: warning: " + message + "\n" << std::flush;
      });
  if (!checkpoint) {
    throw CheckpointError(config.checkpoint.dir, "no valid checkpoint to " + purpose);
  }
  return std::move(*checkpoint);
}

// The checkpoint must be of this config's model (the name and every parameter's and buffer's
// shape); the training settings (ests, batch, lr...) do not matter here.
void RequireSameModel(const CheckpointReader& checkpoint, const JobConfig& config,
                      const Model& model, const std::string& command) {
  auto require = [&](const std::string& key, const std::string& value) {
    std::optional<std::string> saved = checkpoint.fingerprint().Find(key);
    if (saved != value) {
      throw ConfigError(command + ": checkpoint " + checkpoint.path().string() + " was written with " + key +
                        "=" + saved.value_or("<unset>") + ", this config has " + key + "=" +
                        value);
    }
  };
  require("model", ModelLabel(config));
  for (const auto& item : model.named_parameters()) {
    require("param." + item.key(), ShapeText(item.value().sizes()));
  }
  for (const auto& item : model.named_buffers()) {
    require("buffer." + item.key(), ShapeText(item.value().sizes()));
  }
}

void LoadParams(const CheckpointReader& checkpoint, Model& model) {
  const std::string& bytes = checkpoint.Get("params");
  try {
    torch::serialize::InputArchive archive;
    // Onto the CPU, whichever device wrote it.
    archive.load_from(bytes.data(), bytes.size(), torch::Device(torch::kCPU));
    model.load(archive);
  } catch (const c10::Error& e) {
    std::string what = e.what();
    throw CheckpointError(checkpoint.path(),
                          "record \"params\" does not load: " + what.substr(0, what.find('\n')));
  }
}

}  // namespace

TrainedModel LoadTrainedModel(const JobConfig& config, std::ostream& err,
                              const std::string& command, const std::string& purpose) {
  CheckpointReader checkpoint = NewestCheckpoint(config, err, command, purpose);
  ConfigureTorchRuntime(config);
  TrainedModel trained{MakeJobModel(config), checkpoint.path(),
                       static_cast<std::int64_t>(checkpoint.step())};
  RequireSameModel(checkpoint, config, *trained.model, command);
  // The "params" record carries the parameters and the buffers rank 0 held: EST 0's.
  LoadParams(checkpoint, *trained.model);
  trained.model->eval();
  return trained;
}

}  // namespace elastic::agent
