// Where the Fashion-MNIST files of a split live inside a dataset directory (torch-free, so the
// job config can check data.path without loading anything).
#pragma once

#include <optional>
#include <string>

namespace elastic::agent {

enum class Split { kTrain, kTest };

struct SplitFiles {
  std::string images;  // e.g. <dir>/train-images-idx3-ubyte.gz
  std::string labels;  // e.g. <dir>/train-labels-idx1-ubyte.gz
};

// The split's files in `dir`, each either gzip'd as Debian's dataset-fashion-mnist installs them
// (`train-images-idx3-ubyte.gz`) or unpacked (`train-images-idx3-ubyte`); the .gz wins when both
// exist because that is the copy the package manages. Returns nullopt with `missing` set to the
// first file not found.
std::optional<SplitFiles> FindSplitFiles(const std::string& dir, Split split, std::string* missing);

}  // namespace elastic::agent
