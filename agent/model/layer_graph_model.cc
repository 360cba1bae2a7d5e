// LayerGraphModel's graph execution, the Fashion-MNIST CNN as a chain, and the model table.
#include "agent/model/layer_graph_model.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "agent/model/fmnist_cnn.h"
#include "agent/model/torchvision_graphs.h"

namespace elastic::agent {

LayerGraphModel::LayerGraphModel(std::string label, int64_t channels, int64_t default_image_size)
    : label_(std::move(label)), channels_(channels), default_image_size_(default_image_size) {}

int LayerGraphModel::AddLayer(const std::string& name, const std::vector<int>& inputs,
                              std::shared_ptr<GraphLayerModule> module) {
  const int index = static_cast<int>(layers_.size());
  if (inputs.empty() != (index == 0)) {
    throw std::invalid_argument("layer " + name + ": only the first layer reads the image");
  }
  for (int input : inputs) {
    if (input < 0 || input >= index) {
      throw std::invalid_argument("layer " + name + ": input " + std::to_string(input) +
                                  " is not an earlier layer");
    }
  }
  std::string registered = name;
  std::replace(registered.begin(), registered.end(), '.', '_');
  layers_.push_back({name, inputs, register_module(registered, std::move(module))});
  return index;
}

torch::Tensor LayerGraphModel::ForwardLayer(size_t index,
                                            const std::vector<torch::Tensor>& inputs) {
  TORCH_CHECK(index < layers_.size(), label_, " has ", layers_.size(), " layers, not ", index);
  return layers_[index].module->Run(inputs);
}

std::vector<torch::Tensor> LayerGraphModel::InputsOf(size_t index,
                                                     const std::vector<torch::Tensor>& outputs,
                                                     const torch::Tensor& image) const {
  const std::vector<int>& inputs = layers_.at(index).inputs;
  if (inputs.empty()) return {image};
  std::vector<torch::Tensor> tensors;
  for (int input : inputs) tensors.push_back(outputs.at(input));
  return tensors;
}

std::vector<torch::Tensor> LayerGraphModel::ForwardAll(const torch::Tensor& input) {
  std::vector<torch::Tensor> outputs;
  outputs.reserve(layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i) {
    outputs.push_back(ForwardLayer(i, InputsOf(i, outputs, input)));
  }
  return outputs;
}

torch::Tensor LayerGraphModel::forward(const torch::Tensor& input) {
  return ForwardAll(input).back();
}

namespace {

// One block of FmnistCnn (conv1 relu pool | conv2 relu pool | flatten fc1 relu dropout | fc2).
// The CNN itself is registered once on the graph model; blocks only point at it.
class FmnistBlock : public GraphLayerModule {
 public:
  FmnistBlock(std::shared_ptr<FmnistCnn> cnn, int64_t block)
      : cnn_(std::move(cnn)), block_(block) {}
  torch::Tensor Run(const std::vector<torch::Tensor>& inputs) override {
    return cnn_->ForwardBlock(block_, inputs.at(0));
  }
  std::vector<torch::Tensor> LayerParameters() override { return cnn_->BlockParameters(block_); }

 private:
  std::shared_ptr<FmnistCnn> cnn_;
  int64_t block_;
};

std::shared_ptr<LayerGraphModel> MakeFmnistGraph() {
  auto model = std::make_shared<LayerGraphModel>("fmnist_cnn", 1, 28);
  auto cnn = model->register_module("cnn", std::make_shared<FmnistCnn>());
  const char* names[] = {"conv1", "conv2", "fc1", "fc2"};
  for (int64_t block = 0; block < cnn->BlockCount(); ++block) {
    std::vector<int> inputs;
    if (block > 0) inputs.push_back(static_cast<int>(block - 1));
    model->AddLayer(names[block], inputs, std::make_shared<FmnistBlock>(cnn, block));
  }
  return model;
}

}  // namespace

std::shared_ptr<LayerGraphModel> MakeLayerGraphModel(std::string_view name, int64_t classes) {
  if (name == "fmnist_cnn") return classes == 10 ? MakeFmnistGraph() : nullptr;
  if (name == "vgg16") return MakeVgg16Graph(classes);
  if (name == "wide_resnet101_2") return MakeWideResNet101_2Graph(classes);
  if (name == "inception_v3") return MakeInceptionV3Graph(classes);
  return nullptr;
}

bool IsLayerGraphModel(std::string_view name) {
  return name == "fmnist_cnn" || name == "vgg16" || name == "wide_resnet101_2" ||
         name == "inception_v3";
}

std::string_view LayerGraphModelNames() {
  return "fmnist_cnn, vgg16, wide_resnet101_2, inception_v3";
}

int64_t MinimumImageSize(std::string_view name) {
  if (name == "fmnist_cnn") return 28;
  if (name == "inception_v3") return 75;
  return 32;  // vgg16: five 2x2 pools; wide_resnet101_2: five halvings
}

}  // namespace elastic::agent
