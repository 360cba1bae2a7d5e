// RunEvalCommand: the trained model (trained_model.h) classifies the test split.
#include "agent/eval/eval_command.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <ostream>

#include "agent/common/errors.h"
#include "agent/data/dataset.h"
#include "agent/eval/trained_model.h"
#include "agent/train/trainer.h"
#include "common/atomic_file.h"

namespace elastic::agent {
namespace {

// Samples per forward pass: bounds memory; the result does not depend on it (eval mode, no
// cross-sample op).
constexpr std::int64_t kEvalBatch = 1000;

// Adds one batch's hits per class. `logits` are Model::forward's ([n, C] or [n, C, T]).
void Count(const torch::Tensor& logits, const torch::Tensor& targets, EvalReport& report) {
  const std::int64_t classes = logits.size(1);
  report.tokens = logits.dim() == 3;
  if (report.class_total.empty()) {
    report.class_total.assign(static_cast<std::size_t>(classes), 0);
    report.class_correct.assign(static_cast<std::size_t>(classes), 0);
  }
  const torch::Tensor labels = targets.flatten();
  const torch::Tensor hit = logits.argmax(1).flatten().eq(labels);
  const std::int64_t largest = labels.max().item<std::int64_t>();
  if (largest >= classes) {
    throw DataError("test data: target " + std::to_string(largest) + " is not one of the " +
                    std::to_string(classes) + " classes the model outputs");
  }
  const torch::Tensor total = torch::bincount(labels, {}, classes);
  const torch::Tensor correct = torch::bincount(labels.masked_select(hit), {}, classes);
  for (std::int64_t c = 0; c < classes; ++c) {
    report.class_total[static_cast<std::size_t>(c)] += total[c].item<std::int64_t>();
    report.class_correct[static_cast<std::size_t>(c)] += correct[c].item<std::int64_t>();
  }
}

// Classifies every test sample in order; returns their logits in the module's own layout when
// `keep_logits`.
torch::Tensor Classify(Model& model, const Dataset& test, EvalReport& report, bool keep_logits) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> kept;
  for (std::int64_t first = 0; first < test.size(); first += kEvalBatch) {
    std::vector<std::int64_t> indices(
        static_cast<std::size_t>(std::min(kEvalBatch, test.size() - first)));
    std::iota(indices.begin(), indices.end(), first);
    auto [inputs, targets] = GatherSamples(test, indices);
    const torch::Tensor logits = model.forward(inputs);
    Count(logits, targets, report);
    if (keep_logits) kept.push_back(logits.dim() == 3 ? logits.transpose(1, 2) : logits);
  }
  report.correct = std::accumulate(report.class_correct.begin(), report.class_correct.end(),
                                   std::int64_t{0});
  report.total =
      std::accumulate(report.class_total.begin(), report.class_total.end(), std::int64_t{0});
  return keep_logits ? torch::cat(kept).contiguous() : torch::Tensor();
}

void SaveLogits(const torch::Tensor& logits, const std::string& path) {
  const std::vector<char> bytes = torch::pickle_save(logits);
  WriteFileAtomically(path, std::string_view(bytes.data(), bytes.size()),
                      {std::nullopt, TempName::kFixed});
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

EvalReport RunEvalCommand(const JobConfig& config, std::ostream& err,
                          const std::string& save_logits) {
  TrainedModel trained = LoadTrainedModel(config, err, "eval", "evaluate");
  const Dataset test = LoadTestSet(config);
  EvalReport report;
  report.checkpoint = trained.checkpoint;
  report.step = trained.step;
  report.fashion_mnist_names = config.data.format == DatasetKind::kFashionMnist;
  const torch::Tensor logits = Classify(*trained.model, test, report, !save_logits.empty());
  if (!save_logits.empty()) SaveLogits(logits, save_logits);
  return report;
}

std::string FormatEvalReport(const EvalReport& report) {
  std::string text = "elastic-agent: eval checkpoint=" + report.checkpoint.string() +
                     " step=" + std::to_string(report.step) + " " +
                     Ratio(report.correct, report.total) + "\n";
  for (std::size_t c = 0; c < report.class_total.size(); ++c) {
    if (report.tokens && report.class_total[c] == 0) continue;
    text += "class=" + std::to_string(c);
    if (report.fashion_mnist_names && c < kFashionMnistClasses.size()) {
      text += " name=\"" + std::string(kFashionMnistClasses[c]) + "\"";
    }
    text += " " + Ratio(report.class_correct[c], report.class_total[c]) + "\n";
  }
  return text;
}

}  // namespace elastic::agent
