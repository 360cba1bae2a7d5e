// `elastic-agent eval`: test-set accuracy (overall and per class) of the newest valid checkpoint
// of a job. Torch-free header so main.cc compiles quickly.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "agent/config/job_config.h"

namespace elastic::agent {

inline constexpr int kFashionMnistClassCount = 10;
// Fashion-MNIST's class names by label (Xiao et al. 2017, Table 1).
inline constexpr std::array<std::string_view, kFashionMnistClassCount> kFashionMnistClasses = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// Correct predictions out of all test samples (a token model: all target tokens), overall and
// per true class.
struct EvalReport {
  std::filesystem::path checkpoint;
  std::int64_t step = 0;
  std::int64_t correct = 0;
  std::int64_t total = 0;
  std::vector<std::int64_t> class_correct;  // index = class; one per model output
  std::vector<std::int64_t> class_total;
  bool fashion_mnist_names = false;  // print kFashionMnistClasses beside the labels
  bool tokens = false;  // a token model: print only the classes that occur
};

// Loads the parameters and buffers of the newest valid checkpoint in checkpoint.dir (corrupt
// newer ones are skipped with a warning to `err`, as train does) and classifies the test split
// of data.path (t10k files, or test*.pt shards) with the model in eval mode (no dropout), train.threads intra-op threads and
// deterministic algorithms, so the same checkpoint always gives the same report.
// Throws ConfigError when checkpoint.dir is not set or the checkpoint is of another model,
// CheckpointError when the directory holds no valid checkpoint, DataError for the test files.
// `save_logits` non-empty: also writes every test sample's logits (in the module's own layout,
// [N, C] or [N, T, V], test order) there as one tensor that Python's torch.load reads.
EvalReport RunEvalCommand(const JobConfig& config, std::ostream& err,
                          const std::string& save_logits = "");

// The report as printed, one `key=value` line each:
//   elastic-agent: eval checkpoint=<path> step=<N> accuracy=0.8712 correct=8712 total=10000
//   class=0 name="T-shirt/top" accuracy=0.8120 correct=812 total=1000
//   ... (one line per class, in label order)
// Accuracy has 4 decimals; a class without test samples shows accuracy=nan.
std::string FormatEvalReport(const EvalReport& report);

}  // namespace elastic::agent
