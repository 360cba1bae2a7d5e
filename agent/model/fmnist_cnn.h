// fmnist_cnn: a small convolutional network for 28x28 grey images, 10 classes.
#pragma once

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "agent/model/model.h"

namespace elastic::agent {

// conv(1->16, 5x5) relu maxpool2 -> conv(16->32, 5x5) relu maxpool2 -> fc(512->128) relu
// dropout(0.25) -> fc(128->10). About 80k parameters: small enough for CPU CI.
class FmnistCnn : public Model {
 public:
  FmnistCnn();
  torch::Tensor forward(const torch::Tensor& input) override;
  // Four blocks: conv1 relu pool | conv2 relu pool | flatten fc1 relu dropout | fc2.
  std::int64_t BlockCount() const override { return 4; }
  torch::Tensor ForwardBlock(std::int64_t index, const torch::Tensor& input) override;
  std::vector<torch::Tensor> BlockParameters(std::int64_t index) const override;

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::Conv2d conv2_;
  torch::nn::Linear fc1_;
  torch::nn::Dropout dropout_;
  torch::nn::Linear fc2_;
};

}  // namespace elastic::agent
