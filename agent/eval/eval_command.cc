// RunEvalCommand: restore a checkpoint's parameters into a fresh model, classify the test split.
#include "agent/eval/eval_command.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>

#include "agent/checkpoint/checkpoint_dir.h"
#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/common/errors.h"
#include "agent/data/dataset.h"
#include "agent/model/model.h"
#include "agent/model/registry.h"
#include "agent/train/trainer.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// Samples per forward pass: bounds memory; the result does not depend on it (eval mode, no
// cross-sample op).
constexpr std::int64_t kEvalBatch = 1000;

CheckpointReader NewestCheckpoint(const JobConfig& config, std::ostream& err) {
  if (config.checkpoint.dir.empty()) {
    throw ConfigError("eval: checkpoint.dir is not set: no checkpoint to evaluate");
  }
  std::optional<CheckpointReader> checkpoint =
      FindNewestValid(config.checkpoint.dir, [&](const std::string& message) {
        err << "elastic-agent: warning: " + message + "\n" << std::flush;
      });
  if (!checkpoint) {
    throw CheckpointError(config.checkpoint.dir, "no valid checkpoint to evaluate");
  }
  return std::move(*checkpoint);
}

// The checkpoint must be of this config's model (the name and every parameter's shape); the
// training settings (ests, batch, lr...) do not matter for evaluation.
void RequireSameModel(const CheckpointReader& checkpoint, const JobConfig& config,
                      const Model& model) {
  auto require = [&](const std::string& key, const std::string& value) {
    std::optional<std::string> saved = checkpoint.fingerprint().Find(key);
    if (saved != value) {
      throw ConfigError("eval: checkpoint " + checkpoint.path().string() + " was written with " +
                        key + "=" + saved.value_or("<unset>") + ", this config has " + key + "=" +
                        value);
    }
  };
  require("model", config.model.name);
  for (const auto& item : model.named_parameters()) {
    std::string shape = "[";
    for (std::int64_t i = 0; i < item.value().dim(); ++i) {
      shape += (i > 0 ? ", " : "") + std::to_string(item.value().size(i));
    }
    require("param." + item.key(), shape + "]");
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

void Classify(Model& model, const Dataset& test, EvalReport& report) {
  torch::NoGradGuard no_grad;
  model.eval();
  for (std::int64_t first = 0; first < test.size(); first += kEvalBatch) {
    const std::int64_t last = std::min(first + kEvalBatch, test.size());
    torch::Tensor predicted = model.forward(test.images.slice(0, first, last)).argmax(1);
    torch::Tensor labels = test.labels.slice(0, first, last);
    torch::Tensor hit = predicted.eq(labels);
    auto label = labels.accessor<std::int64_t, 1>();
    auto ok = hit.accessor<bool, 1>();
    for (std::int64_t i = 0; i < last - first; ++i) {
      ++report.class_total[static_cast<std::size_t>(label[i])];
      if (ok[i]) ++report.class_correct[static_cast<std::size_t>(label[i])];
    }
  }
  for (int c = 0; c < kFashionMnistClassCount; ++c) {
    report.correct += report.class_correct[static_cast<std::size_t>(c)];
    report.total += report.class_total[static_cast<std::size_t>(c)];
  }
}

std::string Ratio(std::int64_t correct, std::int64_t total) {
  char text[64];
  std::snprintf(text, sizeof text, "accuracy=%.4f correct=%lld total=%lld",
                total > 0 ? static_cast<double>(correct) / static_cast<double>(total)
                          : std::numeric_limits<double>::quiet_NaN(),
                static_cast<long long>(correct), static_cast<long long>(total));
  return text;
}

}  // namespace

EvalReport RunEvalCommand(const JobConfig& config, std::ostream& err) {
  CheckpointReader checkpoint = NewestCheckpoint(config, err);
  ConfigureTorchRuntime(config);
  std::shared_ptr<Model> model = MakeModel(config.model.name);
  RequireSameModel(checkpoint, config, *model);
  LoadParams(checkpoint, *model);
  const Dataset test = LoadFashionMnist(config.data.path, Split::kTest);
  EvalReport report;
  report.checkpoint = checkpoint.path();
  report.step = static_cast<std::int64_t>(checkpoint.step());
  Classify(*model, test, report);
  return report;
}

std::string FormatEvalReport(const EvalReport& report) {
  std::string text = "elastic-agent: eval checkpoint=" + report.checkpoint.string() +
                     " step=" + std::to_string(report.step) + " " +
                     Ratio(report.correct, report.total) + "\n";
  for (int c = 0; c < kFashionMnistClassCount; ++c) {
    const auto i = static_cast<std::size_t>(c);
    text += "class=" + std::to_string(c) + " name=\"" + std::string(kFashionMnistClasses[i]) +
            "\" " + Ratio(report.class_correct[i], report.class_total[i]) + "\n";
  }
  return text;
}

}  // namespace elastic::agent
