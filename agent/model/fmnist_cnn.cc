// FmnistCnn layers and forward pass.
#include "agent/model/fmnist_cnn.h"

#include <torch/torch.h>

namespace elastic::agent {
namespace {

constexpr double kDropout = 0.25;

}  // namespace

// Registration order is the parameter order of the params_sha256 contract: do not reorder.
FmnistCnn::FmnistCnn()
    : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 5)))),
      conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5)))),
      fc1_(register_module("fc1", torch::nn::Linear(32 * 4 * 4, 128))),
      dropout_(register_module("dropout", torch::nn::Dropout(kDropout))),
      fc2_(register_module("fc2", torch::nn::Linear(128, 10))) {}

torch::Tensor FmnistCnn::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  for (std::int64_t block = 0; block < BlockCount(); ++block) x = ForwardBlock(block, x);
  return x;
}

// The same operations, in the same order, as the single forward function had before blocks
// existed, so params_sha256 baselines did not move.
torch::Tensor FmnistCnn::ForwardBlock(std::int64_t index, const torch::Tensor& input) {
  switch (index) {
    case 0:
      return torch::max_pool2d(torch::relu(conv1_->forward(input)), 2);  // 16x12x12
    case 1:
      return torch::max_pool2d(torch::relu(conv2_->forward(input)), 2);  // 32x4x4
    case 2:
      return dropout_->forward(torch::relu(fc1_->forward(input.flatten(1))));
    case 3:
      return fc2_->forward(input);
    default:
      TORCH_CHECK(false, "fmnist_cnn has 4 blocks, not block ", index);
  }
}

std::vector<torch::Tensor> FmnistCnn::BlockParameters(std::int64_t index) const {
  switch (index) {
    case 0:
      return {conv1_->weight, conv1_->bias};
    case 1:
      return {conv2_->weight, conv2_->bias};
    case 2:
      return {fc1_->weight, fc1_->bias};
    case 3:
      return {fc2_->weight, fc2_->bias};
    default:
      TORCH_CHECK(false, "fmnist_cnn has 4 blocks, not block ", index);
  }
}

}  // namespace elastic::agent
