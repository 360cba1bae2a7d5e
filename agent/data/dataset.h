// The training data as the batch queue reads it: in-memory Fashion-MNIST (or corpus) tensors, or
// a user's shards loaded on demand. Includes LibTorch: only the trainer and
// its tests include this header.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "agent/data/fashion_mnist_files.h"
#include "agent/data/tensor_shards.h"

namespace elastic::agent {

// In memory (the built-in formats): images are float32 [N, 1, 28, 28], normalised with the
// training set's mean and standard deviation; labels are int64 [N] in 0..9. Both are contiguous
// CPU tensors. The text corpus keeps token rows in the same two fields (char_dataset.h).
// A user's shards (data.format = "tensors"): `shards` serves the samples on demand and the two
// tensors are undefined.
struct Dataset {
  torch::Tensor images;
  torch::Tensor labels;
  std::shared_ptr<const TensorShards> shards;
  std::int64_t size() const { return shards ? shards->size() : labels.size(0); }
};

// The samples `indices` of `data` in that order: inputs and targets, contiguous copies.
std::pair<torch::Tensor, torch::Tensor> GatherSamples(const Dataset& data,
                                                      std::span<const std::int64_t> indices);

// The inputs of samples [0, count) (the output-shape probe, the profiler).
// REQUIRES: count <= data.size().
torch::Tensor LeadingInputs(const Dataset& data, std::int64_t count);

// The split `prefix` ("train" or "test") of the shards in `dir`, loaded on demand behind a cache
// of `cache_mb` MiB (tensor_shards.h; throws DataError as it does).
Dataset OpenTensorShards(const std::string& dir, const std::string& prefix, std::int64_t cache_mb);

// Reads and validates one split from `dir` (see FindSplitFiles). Throws DataError naming the
// file: missing, malformed, wrong image size, image/label count mismatch, label out of range.
Dataset LoadFashionMnist(const std::string& dir, Split split);

// The normalisation applied to raw pixel bytes, exposed so tests and eval agree with training.
torch::Tensor NormalizePixels(const torch::Tensor& pixels_uint8);

}  // namespace elastic::agent
