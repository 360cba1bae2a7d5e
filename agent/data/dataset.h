// In-memory Fashion-MNIST as tensors ready for training. Includes LibTorch: only the trainer and
// its tests include this header.
#pragma once

#include <torch/types.h>

#include <string>

#include "agent/data/fashion_mnist_files.h"

namespace elastic::agent {

// Images are float32 [N, 1, 28, 28], normalised with the training set's mean and standard
// deviation; labels are int64 [N] in 0..9. Both are contiguous CPU tensors.
struct Dataset {
  torch::Tensor images;
  torch::Tensor labels;
  std::int64_t size() const { return labels.size(0); }
};

// Reads and validates one split from `dir` (see FindSplitFiles). Throws DataError naming the
// file: missing, malformed, wrong image size, image/label count mismatch, label out of range.
Dataset LoadFashionMnist(const std::string& dir, Split split);

// The normalisation applied to raw pixel bytes, exposed so tests and eval agree with training.
torch::Tensor NormalizePixels(const torch::Tensor& pixels_uint8);

}  // namespace elastic::agent
