// File-name conventions of the IDX distribution of (Fashion-)MNIST.
#include "agent/data/fashion_mnist_files.h"

#include <filesystem>
#include <system_error>

namespace elastic::agent {
namespace {

std::optional<std::string> FindOne(const std::filesystem::path& dir, const std::string& stem) {
  for (const std::string& name : {stem + ".gz", stem}) {
    std::error_code error;
    if (std::filesystem::is_regular_file(dir / name, error)) return (dir / name).string();
  }
  return std::nullopt;
}

}  // namespace

std::optional<SplitFiles> FindSplitFiles(const std::string& dir, Split split,
                                         std::string* missing) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  SplitFiles files;
  for (auto [out, stem] : {std::pair{&files.images, prefix + "-images-idx3-ubyte"},
                           std::pair{&files.labels, prefix + "-labels-idx1-ubyte"}}) {
    auto found = FindOne(dir, stem);
    if (!found) {
      if (missing != nullptr) *missing = stem + "[.gz]";
      return std::nullopt;
    }
    *out = *found;
  }
  return files;
}

}  // namespace elastic::agent
