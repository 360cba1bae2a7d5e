// PrepareMiniBatch: gather rows, then the (EST-seeded) augmentation.
#include "agent/data/mini_batch.h"

#include <torch/torch.h>

#include <algorithm>

#include "agent/data/est_data_stream.h"

namespace elastic::agent {
namespace {

// Mirrors each image of `images` ([n, C, H, W], contiguous float) left-right where its draw
// says so: one draw per sample, in sample order, from the batch's own stream.
void RandomHorizontalFlip(torch::Tensor& images, std::uint64_t seed) {
  EstDataStream draws(seed);
  const std::int64_t n = images.size(0);
  const std::int64_t width = images.size(-1);
  const std::int64_t rows = images.numel() / std::max<std::int64_t>(n * width, 1);
  float* data = images.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    if ((draws.Next() >> 63) == 0) continue;
    float* image = data + i * rows * width;
    for (std::int64_t r = 0; r < rows; ++r)
      std::reverse(image + r * width, image + (r + 1) * width);
  }
}

}  // namespace

MiniBatch PrepareMiniBatch(const Dataset& data, std::span<const std::int64_t> indices,
                           std::uint64_t seed, Augment augment) {
  torch::NoGradGuard no_grad;
  auto [inputs, targets] = GatherSamples(data, indices);
  MiniBatch batch{std::move(inputs), std::move(targets)};
  if (augment == Augment::kFlip) RandomHorizontalFlip(batch.inputs, seed);
  return batch;
}

}  // namespace elastic::agent
