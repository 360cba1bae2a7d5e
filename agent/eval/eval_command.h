// `elastic-agent eval`: test-set accuracy (overall and per class) of the newest valid checkpoint
// of a job. Torch-free header so main.cc compiles quickly.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

#include "agent/config/job_config.h"

namespace elastic::agent {

inline constexpr int kFashionMnistClassCount = 10;
// Fashion-MNIST's class names by label (Xiao et al. 2017, Table 1).
inline constexpr std::array<std::string_view, kFashionMnistClassCount> kFashionMnistClasses = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// Correct predictions out of all test samples, overall and per true label.
struct EvalReport {
  std::filesystem::path checkpoint;
  std::int64_t step = 0;
  std::int64_t correct = 0;
  std::int64_t total = 0;
  std::array<std::int64_t, kFashionMnistClassCount> class_correct{};
  std::array<std::int64_t, kFashionMnistClassCount> class_total{};
};

// Loads the parameters of the newest valid checkpoint in checkpoint.dir (corrupt newer ones are
// skipped with a warning to `err`, as train does) and classifies the test split (t10k files) of
// data.path with the model in eval mode (no dropout), train.threads intra-op threads and
// deterministic algorithms, so the same checkpoint always gives the same report.
// Throws ConfigError when checkpoint.dir is not set or the checkpoint is of another model,
// CheckpointError when the directory holds no valid checkpoint, DataError for the test files.
EvalReport RunEvalCommand(const JobConfig& config, std::ostream& err);

// The report as printed, one `key=value` line each:
//   elastic-agent: eval checkpoint=<path> step=<N> accuracy=0.8712 correct=8712 total=10000
//   class=0 name="T-shirt/top" accuracy=0.8120 correct=812 total=1000
//   ... (one line per class, in label order)
// Accuracy has 4 decimals; a class without test samples shows accuracy=nan.
std::string FormatEvalReport(const EvalReport& report);

}  // namespace elastic::agent
