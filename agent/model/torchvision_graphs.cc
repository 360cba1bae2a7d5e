// The torchvision architectures layer by layer, with the names of bench/burst_graphs.cc.
#include "agent/model/torchvision_graphs.h"

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace elastic::agent {
namespace {

namespace nn = torch::nn;

struct ConvSpec {
  int64_t in = 0, out = 0;
  int64_t kh = 1, kw = 1;
  int64_t stride = 1;
  int64_t ph = 0, pw = 0;
};

ConvSpec Square(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t pad = 0) {
  return {in, out, k, k, stride, pad, pad};
}

enum class Norm { kNone, kBatchNorm };

// Convolution, then batch norm (conv without bias) or a conv bias, then ReLU when `relu`.
class ConvLayer : public GraphLayerModule {
 public:
  ConvLayer(const ConvSpec& s, Norm norm, double bn_eps, bool relu) : relu_(relu) {
    conv_ = register_module(
        "conv", nn::Conv2d(nn::Conv2dOptions(s.in, s.out, {s.kh, s.kw})
                               .stride(s.stride)
                               .padding(torch::ExpandingArray<2>({s.ph, s.pw}))
                               .bias(norm == Norm::kNone)));
    if (norm == Norm::kBatchNorm) {
      bn_ = register_module("bn", nn::BatchNorm2d(nn::BatchNorm2dOptions(s.out).eps(bn_eps)));
    }
  }
  torch::Tensor Run(const std::vector<torch::Tensor>& inputs) override {
    torch::Tensor x = conv_->forward(inputs.at(0));
    if (bn_) x = bn_->forward(x);
    return relu_ ? torch::relu(x) : x;
  }

 private:
  nn::Conv2d conv_{nullptr};
  nn::BatchNorm2d bn_{nullptr};
  bool relu_;
};

class PoolLayer : public GraphLayerModule {
 public:
  enum Kind { kMax, kAverage };
  PoolLayer(Kind kind, int64_t k, int64_t stride, int64_t pad)
      : kind_(kind), k_(k), stride_(stride), pad_(pad) {}
  torch::Tensor Run(const std::vector<torch::Tensor>& inputs) override {
    if (kind_ == kMax) return torch::max_pool2d(inputs.at(0), k_, stride_, pad_);
    return torch::avg_pool2d(inputs.at(0), k_, stride_, pad_);  // count_include_pad, as F.
  }

 private:
  Kind kind_;
  int64_t k_, stride_, pad_;
};

// Adaptive average pool to 1x1, flattened: [batch, channels].
class GlobalPoolLayer : public GraphLayerModule {
 public:
  torch::Tensor Run(const std::vector<torch::Tensor>& inputs) override {
    return torch::adaptive_avg_pool2d(inputs.at(0), {1, 1}).flatten(1);
  }
};

// [adaptive avg pool to pool x pool,] flatten, [dropout,] linear, [ReLU, dropout].
class LinearLayer : public GraphLayerModule {
 public:
  struct Spec {
    int64_t in = 0, out = 0;
    int64_t adaptive_pool = 0;  // 0: none
    double dropout_before = 0.0;
    bool relu_dropout_after = false;
  };
  explicit LinearLayer(const Spec& spec) : spec_(spec) {
    fc_ = register_module("fc", nn::Linear(spec.in, spec.out));
  }
  torch::Tensor Run(const std::vector<torch::Tensor>& inputs) override {
    torch::Tensor x = inputs.at(0);
    if (spec_.adaptive_pool > 0) {
      x = torch::adaptive_avg_pool2d(x, {spec_.adaptive_pool, spec_.adaptive_pool});
    }
    x = x.flatten(1);
    if (spec_.dropout_before > 0) x = torch::dropout(x, spec_.dropout_before, is_training());
    x = fc_->forward(x);
    if (spec_.relu_dropout_after) x = torch::dropout(torch::relu(x), 0.5, is_training());
    return x;
  }

 private:
  Spec spec_;
  nn::Linear fc_{nullptr};
};

class ConcatLayer : public GraphLayerModule {
 public:
  torch::Tensor Run(const std::vector<torch::Tensor>& inputs) override {
    return torch::cat(inputs, 1);
  }
};

// Residual add followed by ReLU.
class AddReluLayer : public GraphLayerModule {
 public:
  torch::Tensor Run(const std::vector<torch::Tensor>& inputs) override {
    return torch::relu(inputs.at(0) + inputs.at(1));
  }
};

// Adds layers to a model, tracking each layer's output channels.
class Builder {
 public:
  Builder(std::shared_ptr<LayerGraphModel> model, double bn_eps)
      : model_(std::move(model)), bn_eps_(bn_eps) {}

  int64_t Channels(int layer) const { return layer < 0 ? model_->channels() : channels_[layer]; }

  int Conv(const std::string& name, int input, ConvSpec spec, Norm norm = Norm::kBatchNorm,
           bool relu = true) {
    spec.in = Channels(input);
    return Add(name, {input}, spec.out, std::make_shared<ConvLayer>(spec, norm, bn_eps_, relu));
  }
  int Pool(const std::string& name, int input, PoolLayer::Kind kind, int64_t k, int64_t stride,
           int64_t pad) {
    return Add(name, {input}, Channels(input), std::make_shared<PoolLayer>(kind, k, stride, pad));
  }
  int GlobalPool(const std::string& name, int input) {
    return Add(name, {input}, Channels(input), std::make_shared<GlobalPoolLayer>());
  }
  int Linear(const std::string& name, int input, LinearLayer::Spec spec) {
    return Add(name, {input}, spec.out, std::make_shared<LinearLayer>(spec));
  }
  int Concat(const std::string& name, const std::vector<int>& inputs) {
    int64_t channels = 0;
    for (int input : inputs) channels += Channels(input);
    return Add(name, inputs, channels, std::make_shared<ConcatLayer>());
  }
  int AddRelu(const std::string& name, const std::vector<int>& inputs) {
    return Add(name, inputs, Channels(inputs.front()), std::make_shared<AddReluLayer>());
  }
  std::shared_ptr<LayerGraphModel> Finish() { return std::move(model_); }

 private:
  int Add(const std::string& name, std::vector<int> inputs, int64_t channels,
          std::shared_ptr<GraphLayerModule> module) {
    if (inputs == std::vector<int>{-1}) inputs.clear();
    channels_.push_back(channels);
    return model_->AddLayer(name, inputs, std::move(module));
  }

  std::shared_ptr<LayerGraphModel> model_;
  double bn_eps_;
  std::vector<int64_t> channels_;
};

constexpr auto kMax = PoolLayer::kMax;
constexpr auto kAverage = PoolLayer::kAverage;

ConvSpec Out(int64_t out, int64_t k, int64_t stride = 1, int64_t pad = 0) {
  return Square(0, out, k, stride, pad);
}
ConvSpec Row(int64_t out) { return {0, out, 1, 7, 1, 0, 3}; }  // 1x7, padding (0, 3)
ConvSpec Col(int64_t out) { return {0, out, 7, 1, 1, 3, 0}; }  // 7x1, padding (3, 0)

// torchvision Bottleneck, width_per_group 128; conv3 and the projection have no ReLU of their
// own (the add's ReLU follows). Returns the add layer.
int Bottleneck(Builder& g, const std::string& name, int input, int64_t planes, int64_t stride,
               bool project) {
  const int64_t width = planes * 2;
  int a = g.Conv(name + ".conv1", input, Out(width, 1));
  int b = g.Conv(name + ".conv2", a, Out(width, 3, stride, 1));
  int c = g.Conv(name + ".conv3", b, Out(planes * 4, 1), Norm::kBatchNorm, /*relu=*/false);
  int shortcut = project ? g.Conv(name + ".downsample", input, Out(planes * 4, 1, stride),
                                  Norm::kBatchNorm, /*relu=*/false)
                         : input;
  return g.AddRelu(name + ".add", {c, shortcut});
}

int InceptionA(Builder& g, const std::string& n, int x, int64_t pool_features) {
  int b1 = g.Conv(n + ".branch1x1", x, Out(64, 1));
  int b5 = g.Conv(n + ".branch5x5_1", x, Out(48, 1));
  b5 = g.Conv(n + ".branch5x5_2", b5, Out(64, 5, 1, 2));
  int b3 = g.Conv(n + ".branch3x3dbl_1", x, Out(64, 1));
  b3 = g.Conv(n + ".branch3x3dbl_2", b3, Out(96, 3, 1, 1));
  b3 = g.Conv(n + ".branch3x3dbl_3", b3, Out(96, 3, 1, 1));
  int bp = g.Pool(n + ".avg_pool", x, kAverage, 3, 1, 1);
  bp = g.Conv(n + ".branch_pool", bp, Out(pool_features, 1));
  return g.Concat(n + ".cat", {b1, b5, b3, bp});
}

int InceptionB(Builder& g, const std::string& n, int x) {
  int b3 = g.Conv(n + ".branch3x3", x, Out(384, 3, 2));
  int bd = g.Conv(n + ".branch3x3dbl_1", x, Out(64, 1));
  bd = g.Conv(n + ".branch3x3dbl_2", bd, Out(96, 3, 1, 1));
  bd = g.Conv(n + ".branch3x3dbl_3", bd, Out(96, 3, 2));
  int bp = g.Pool(n + ".max_pool", x, kMax, 3, 2, 0);
  return g.Concat(n + ".cat", {b3, bd, bp});
}

int InceptionC(Builder& g, const std::string& n, int x, int64_t c7) {
  int b1 = g.Conv(n + ".branch1x1", x, Out(192, 1));
  int b7 = g.Conv(n + ".branch7x7_1", x, Out(c7, 1));
  b7 = g.Conv(n + ".branch7x7_2", b7, Row(c7));
  b7 = g.Conv(n + ".branch7x7_3", b7, Col(192));
  int bd = g.Conv(n + ".branch7x7dbl_1", x, Out(c7, 1));
  bd = g.Conv(n + ".branch7x7dbl_2", bd, Col(c7));
  bd = g.Conv(n + ".branch7x7dbl_3", bd, Row(c7));
  bd = g.Conv(n + ".branch7x7dbl_4", bd, Col(c7));
  bd = g.Conv(n + ".branch7x7dbl_5", bd, Row(192));
  int bp = g.Pool(n + ".avg_pool", x, kAverage, 3, 1, 1);
  bp = g.Conv(n + ".branch_pool", bp, Out(192, 1));
  return g.Concat(n + ".cat", {b1, b7, bd, bp});
}

int InceptionD(Builder& g, const std::string& n, int x) {
  int b3 = g.Conv(n + ".branch3x3_1", x, Out(192, 1));
  b3 = g.Conv(n + ".branch3x3_2", b3, Out(320, 3, 2));
  int b7 = g.Conv(n + ".branch7x7x3_1", x, Out(192, 1));
  b7 = g.Conv(n + ".branch7x7x3_2", b7, Row(192));
  b7 = g.Conv(n + ".branch7x7x3_3", b7, Col(192));
  b7 = g.Conv(n + ".branch7x7x3_4", b7, Out(192, 3, 2));
  int bp = g.Pool(n + ".max_pool", x, kMax, 3, 2, 0);
  return g.Concat(n + ".cat", {b3, b7, bp});
}

// The 1x3 and 3x1 convolutions after a shared input, joined by torchvision's inner torch.cat.
int SplitPair(Builder& g, const std::string& n, int x) {
  int a = g.Conv(n + "a", x, {0, 384, 1, 3, 1, 0, 1});
  int b = g.Conv(n + "b", x, {0, 384, 3, 1, 1, 1, 0});
  return g.Concat(n + ".cat", {a, b});
}

int InceptionE(Builder& g, const std::string& n, int x) {
  int b1 = g.Conv(n + ".branch1x1", x, Out(320, 1));
  int b3 = g.Conv(n + ".branch3x3_1", x, Out(384, 1));
  b3 = SplitPair(g, n + ".branch3x3_2", b3);
  int bd = g.Conv(n + ".branch3x3dbl_1", x, Out(448, 1));
  bd = g.Conv(n + ".branch3x3dbl_2", bd, Out(384, 3, 1, 1));
  bd = SplitPair(g, n + ".branch3x3dbl_3", bd);
  int bp = g.Pool(n + ".avg_pool", x, kAverage, 3, 1, 1);
  bp = g.Conv(n + ".branch_pool", bp, Out(192, 1));
  return g.Concat(n + ".cat", {b1, b3, bd, bp});
}

}  // namespace

std::shared_ptr<LayerGraphModel> MakeVgg16Graph(int64_t classes) {
  Builder g(std::make_shared<LayerGraphModel>("vgg16", 3, 224), 1e-5);
  const std::vector<std::vector<int64_t>> stages = {
      {64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  int x = -1;
  for (size_t s = 0; s < stages.size(); ++s) {
    for (size_t k = 0; k < stages[s].size(); ++k) {
      std::string name = "conv" + std::to_string(s + 1) + "_" + std::to_string(k + 1);
      x = g.Conv(name, x, Out(stages[s][k], 3, 1, 1), Norm::kNone);
    }
    x = g.Pool("pool" + std::to_string(s + 1), x, kMax, 2, 2, 0);
  }
  x = g.Linear("fc6", x, {512 * 7 * 7, 4096, /*adaptive_pool=*/7, 0.0, true});
  x = g.Linear("fc7", x, {4096, 4096, 0, 0.0, true});
  g.Linear("fc8", x, {4096, classes, 0, 0.0, false});
  return g.Finish();
}

std::shared_ptr<LayerGraphModel> MakeWideResNet101_2Graph(int64_t classes) {
  Builder g(std::make_shared<LayerGraphModel>("wide_resnet101_2", 3, 224), 1e-5);
  int x = g.Conv("conv1", -1, Out(64, 7, 2, 3));
  x = g.Pool("maxpool", x, kMax, 3, 2, 1);
  const int blocks[] = {3, 4, 23, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = int64_t{64} << stage;
    for (int k = 0; k < blocks[stage]; ++k) {
      std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(k);
      int64_t stride = (k == 0 && stage > 0) ? 2 : 1;
      x = Bottleneck(g, name, x, planes, stride, /*project=*/k == 0);
    }
  }
  x = g.GlobalPool("avgpool", x);
  g.Linear("fc", x, {2048, classes, 0, 0.0, false});
  return g.Finish();
}

std::shared_ptr<LayerGraphModel> MakeInceptionV3Graph(int64_t classes) {
  Builder g(std::make_shared<LayerGraphModel>("inception_v3", 3, 299), 0.001);
  int x = g.Conv("Conv2d_1a_3x3", -1, Out(32, 3, 2));
  x = g.Conv("Conv2d_2a_3x3", x, Out(32, 3));
  x = g.Conv("Conv2d_2b_3x3", x, Out(64, 3, 1, 1));
  x = g.Pool("maxpool1", x, kMax, 3, 2, 0);
  x = g.Conv("Conv2d_3b_1x1", x, Out(80, 1));
  x = g.Conv("Conv2d_4a_3x3", x, Out(192, 3));
  x = g.Pool("maxpool2", x, kMax, 3, 2, 0);
  x = InceptionA(g, "Mixed_5b", x, 32);
  x = InceptionA(g, "Mixed_5c", x, 64);
  x = InceptionA(g, "Mixed_5d", x, 64);
  x = InceptionB(g, "Mixed_6a", x);
  x = InceptionC(g, "Mixed_6b", x, 128);
  x = InceptionC(g, "Mixed_6c", x, 160);
  x = InceptionC(g, "Mixed_6d", x, 160);
  x = InceptionC(g, "Mixed_6e", x, 192);
  x = InceptionD(g, "Mixed_7a", x);
  x = InceptionE(g, "Mixed_7b", x);
  x = InceptionE(g, "Mixed_7c", x);
  x = g.GlobalPool("avgpool", x);
  g.Linear("fc", x, {2048, classes, 0, /*dropout_before=*/0.5, false});
  return g.Finish();
}

}  // namespace elastic::agent
