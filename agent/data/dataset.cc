// LoadFashionMnist: IDX bytes to normalised tensors.
#include "agent/data/dataset.h"

#include <torch/torch.h>

#include <algorithm>

#include "agent/common/errors.h"
#include "agent/data/idx_file.h"

namespace elastic::agent {
namespace {

constexpr std::uint32_t kImageSide = 28;
constexpr int kNumClasses = 10;
// Mean and standard deviation of the Fashion-MNIST training pixels scaled to [0, 1]; constants
// (not recomputed per run) so every split and every worker normalises identically.
constexpr double kPixelMean = 0.2860;
constexpr double kPixelStd = 0.3530;

}  // namespace

torch::Tensor NormalizePixels(const torch::Tensor& pixels_uint8) {
  return pixels_uint8.to(torch::kFloat32).div_(255.0).sub_(kPixelMean).div_(kPixelStd);
}

Dataset LoadFashionMnist(const std::string& dir, Split split) {
  std::string missing;
  auto files = FindSplitFiles(dir, split, &missing);
  if (!files) throw DataError(dir + ": no file " + missing + " (Fashion-MNIST IDX files)");

  IdxArray images = ReadIdxFile(files->images, 3);
  IdxArray labels = ReadIdxFile(files->labels, 1);
  if (images.dims[1] != kImageSide || images.dims[2] != kImageSide) {
    throw DataError(files->images + ": images are " + std::to_string(images.dims[1]) + "x" +
                    std::to_string(images.dims[2]) + ": expected 28x28");
  }
  if (images.dims[0] != labels.dims[0]) {
    throw DataError(files->labels + ": " + std::to_string(labels.dims[0]) + " labels for " +
                    std::to_string(images.dims[0]) + " images in " + files->images);
  }
  auto bad = std::find_if(labels.data.begin(), labels.data.end(),
                          [](std::uint8_t label) { return label >= kNumClasses; });
  if (bad != labels.data.end()) {
    throw DataError(files->labels + ": label " + std::to_string(*bad) + " at index " +
                    std::to_string(bad - labels.data.begin()) + ": expected 0 to 9");
  }

  const auto count = static_cast<std::int64_t>(images.dims[0]);
  // from_blob borrows the vectors; the conversions below copy before they go away.
  torch::Tensor raw =
      torch::from_blob(images.data.data(), {count, 1, kImageSide, kImageSide}, torch::kUInt8);
  torch::Tensor raw_labels = torch::from_blob(labels.data.data(), {count}, torch::kUInt8);
  return Dataset{NormalizePixels(raw).contiguous(), raw_labels.to(torch::kInt64).contiguous(),
                 nullptr};
}

std::pair<torch::Tensor, torch::Tensor> GatherSamples(const Dataset& data,
                                                      std::span<const std::int64_t> indices) {
  if (data.shards) return data.shards->Gather(indices);
  torch::NoGradGuard no_grad;
  // from_blob borrows the indices; index_select copies the rows before the span goes stale.
  torch::Tensor index =
      torch::from_blob(const_cast<std::int64_t*>(indices.data()),
                       {static_cast<std::int64_t>(indices.size())}, torch::kInt64);
  return {data.images.index_select(0, index).contiguous(),
          data.labels.index_select(0, index).contiguous()};
}

torch::Tensor LeadingInputs(const Dataset& data, std::int64_t count) {
  if (!data.shards) return data.images.narrow(0, 0, count).contiguous();
  std::vector<std::int64_t> indices(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) indices[static_cast<std::size_t>(i)] = i;
  return data.shards->Gather(indices).first;
}

Dataset OpenTensorShards(const std::string& dir, const std::string& prefix,
                         std::int64_t cache_mb) {
  Dataset data;
  data.shards = std::make_shared<const TensorShards>(dir, prefix, cache_mb << 20);
  return data;
}

}  // namespace elastic::agent
