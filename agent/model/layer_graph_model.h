// A model as an ordered graph of named layers (DeepPool's granularity: a convolution with its
// batch norm and ReLU is one layer; pools, residual adds and concatenations are layers), so that
// each layer can be run, and its forward + backward timed, alone (agent/profile/layer_profile.h).
//
// Built-in graphs: torchvision's VGG-16, WideResNet-101-2 and Inception-v3 (no auxiliary head),
// with adaptive average pooling so smaller images work, and the Fashion-MNIST CNN as a chain.
// Layer names and edges equal bench/burst_graphs.cc's profiles of the same models.
// Not thread-safe (a torch::nn::Module); the model owns its layers.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace elastic::agent {

// One layer's computation. Its parameters are its own registered ones unless it overrides
// LayerParameters (a view onto another module's block).
class GraphLayerModule : public torch::nn::Module {
 public:
  // `inputs` are the outputs of the layer's input layers, in the order of its input list (the
  // image for the first layer).
  virtual torch::Tensor Run(const std::vector<torch::Tensor>& inputs) = 0;
  virtual std::vector<torch::Tensor> LayerParameters() { return parameters(); }
};

struct GraphLayer {
  std::string name;
  std::vector<int> inputs;  // indices of earlier layers; empty only for the first (the image)
  std::shared_ptr<GraphLayerModule> module;
};

class LayerGraphModel : public torch::nn::Module {
 public:
  // `label` names the model in profiles; the input is [batch, channels, size, size].
  LayerGraphModel(std::string label, int64_t channels, int64_t default_image_size);

  const std::string& label() const { return label_; }
  int64_t channels() const { return channels_; }
  int64_t default_image_size() const { return default_image_size_; }
  const std::vector<GraphLayer>& layers() const { return layers_; }

  // Runs every layer in order; equals ForwardLayer over all layers.
  torch::Tensor forward(const torch::Tensor& input);
  // Layer `index` on its inputs' outputs. REQUIRES: index < layers().size().
  torch::Tensor ForwardLayer(size_t index, const std::vector<torch::Tensor>& inputs);
  // Every layer's output for `input`, in layer order.
  std::vector<torch::Tensor> ForwardAll(const torch::Tensor& input);
  // The inputs layer `index` receives, given every layer's output and the image.
  std::vector<torch::Tensor> InputsOf(size_t index, const std::vector<torch::Tensor>& outputs,
                                      const torch::Tensor& image) const;

  // Adds a layer reading `inputs` (indices of earlier layers; empty for the first layer, which
  // reads the image); returns its index. The module is registered under `name` with dots
  // replaced by underscores. Throws std::invalid_argument for any other input list.
  int AddLayer(const std::string& name, const std::vector<int>& inputs,
               std::shared_ptr<GraphLayerModule> module);

 private:
  std::string label_;
  int64_t channels_;
  int64_t default_image_size_;
  std::vector<GraphLayer> layers_;
};

// "vgg16", "wide_resnet101_2", "inception_v3" (`classes` outputs) or "fmnist_cnn" (10 classes,
// 28x28; `classes` must be 10). Weights from LibTorch's default initialisation. Returns nullptr
// for an unknown name.
std::shared_ptr<LayerGraphModel> MakeLayerGraphModel(std::string_view name, int64_t classes);
bool IsLayerGraphModel(std::string_view name);
std::string_view LayerGraphModelNames();  // comma-separated, for messages
// The smallest square image the model accepts (every feature map stays >= 1 pixel).
int64_t MinimumImageSize(std::string_view name);

}  // namespace elastic::agent
