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
  torch::Tensor x = torch::max_pool2d(torch::relu(conv1_->forward(input)), 2);  // 16x12x12
  x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);                    // 32x4x4
  x = torch::relu(fc1_->forward(x.flatten(1)));
  return fc2_->forward(dropout_->forward(x));
}

}  // namespace elastic::agent
