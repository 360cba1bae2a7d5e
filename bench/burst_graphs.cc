// Layer lists of VGG-16, WideResNet-101-2 and Inception-v3 built from torchvision's shapes.
#include "bench/burst_graphs.h"

#include <algorithm>
#include <vector>

namespace elastic::bench {
namespace {

using burst::ComputePoint;
using burst::Layer;
using burst::ModelProfile;

constexpr double kBytesPerValue = 4.0;  // fp32

struct Shape {
  int c = 0, h = 0, w = 0;
  double Elements() const { return double(c) * h * w; }
};

struct ConvSpec {
  int out = 0;
  int kh = 1, kw = 1;
  int stride = 1;
  int ph = 0, pw = 0;
};

ConvSpec Square(int out, int k, int stride = 1, int pad = 0) {
  return {out, k, k, stride, pad, pad};
}

// Builds a ModelProfile layer by layer, tracking each layer's output shape.
class GraphBuilder {
 public:
  GraphBuilder(std::string name, int global_batch, const burst::NetworkModel& network,
               const DeviceModel& device, Shape input)
      : device_(device), input_(input) {
    profile_.name = std::move(name);
    profile_.global_batch = global_batch;
    profile_.network = network;
  }

  // Convolution; with batch norm (no conv bias) unless `bias`, ReLU fused. input -1: the image.
  int Conv(const std::string& name, int input, const ConvSpec& spec, bool bias = false) {
    Shape in = ShapeOf(input);
    Shape out{spec.out, (in.h + 2 * spec.ph - spec.kh) / spec.stride + 1,
              (in.w + 2 * spec.pw - spec.kw) / spec.stride + 1};
    double weights = double(spec.kh) * spec.kw * in.c * spec.out;
    double params = weights + (bias ? spec.out : 2.0 * spec.out);
    double flops = 2.0 * weights * out.h * out.w;
    return Add(name, Inputs(input), out, flops, params, in.Elements() + out.Elements());
  }

  int Pool(const std::string& name, int input, int k, int stride, int pad) {
    Shape in = ShapeOf(input);
    Shape out{in.c, (in.h + 2 * pad - k) / stride + 1, (in.w + 2 * pad - k) / stride + 1};
    return Add(name, Inputs(input), out, double(k) * k * out.Elements(), 0.0,
               in.Elements() + out.Elements());
  }

  int GlobalPool(const std::string& name, int input) {
    Shape in = ShapeOf(input);
    return Add(name, Inputs(input), {in.c, 1, 1}, in.Elements(), 0.0, in.Elements() + in.c);
  }

  // Fully connected on the flattened input.
  int Linear(const std::string& name, int input, int out) {
    double in = ShapeOf(input).Elements();
    return Add(name, Inputs(input), {out, 1, 1}, 2.0 * in * out, in * out + out, in + out);
  }

  int Concat(const std::string& name, const std::vector<int>& inputs) {
    Shape out = ShapeOf(inputs.front());
    out.c = 0;
    for (int input : inputs) out.c += ShapeOf(input).c;
    return Add(name, inputs, out, 0.0, 0.0, 2.0 * out.Elements());
  }

  // Residual add followed by ReLU.
  int Sum(const std::string& name, const std::vector<int>& inputs) {
    Shape out = ShapeOf(inputs.front());
    return Add(name, inputs, out, out.Elements() * inputs.size(), 0.0,
               (inputs.size() + 1.0) * out.Elements());
  }

  Shape ShapeOf(int layer) const { return layer < 0 ? input_ : shapes_[layer]; }
  ModelProfile Finish() { return std::move(profile_); }

 private:
  static std::vector<int> Inputs(int input) {
    return input < 0 ? std::vector<int>{} : std::vector<int>{input};
  }

  int Add(const std::string& name, std::vector<int> inputs, Shape out, double flops,
          double params, double elements_moved) {
    Layer layer;
    layer.name = name;
    layer.inputs = std::move(inputs);
    layer.param_bytes = params * kBytesPerValue;
    layer.output_bytes_per_sample = out.Elements() * kBytesPerValue;
    double bytes_moved = elements_moved * kBytesPerValue;
    for (int b : ProfiledBatches()) {
      layer.compute.push_back({b, Time(flops, bytes_moved, layer.param_bytes, b)});
    }
    profile_.layers.push_back(std::move(layer));
    shapes_.push_back(out);
    return static_cast<int>(profile_.layers.size()) - 1;
  }

  std::vector<int> ProfiledBatches() const {
    std::vector<int> batches;
    for (int b = 1; b < profile_.global_batch; b *= 2) batches.push_back(b);
    batches.push_back(profile_.global_batch);
    return batches;
  }

  double Time(double flops, double bytes_moved, double param_bytes, int batch) const {
    double work = flops * batch;
    double compute = 0.0;
    if (work > 0.0) {
      double utilization = device_.max_utilization * work / (work + device_.half_util_flops);
      compute = 3.0 * work / (device_.peak_flops * utilization);
    }
    double memory = 3.0 * (bytes_moved * batch + param_bytes) / device_.memory_bytes_per_s;
    return device_.layer_overhead_s + std::max(compute, memory);
  }

  DeviceModel device_;
  Shape input_;
  ModelProfile profile_;
  std::vector<Shape> shapes_;
};

// torchvision Bottleneck with width_per_group 128: conv1 1x1, conv2 3x3 (stride), conv3 1x1,
// projection shortcut on the first block of a stage; returns the add layer.
int Bottleneck(GraphBuilder& g, const std::string& name, int input, int planes, int stride,
               bool project) {
  int width = planes * 2;
  int a = g.Conv(name + ".conv1", input, Square(width, 1));
  int b = g.Conv(name + ".conv2", a, Square(width, 3, stride, 1));
  int c = g.Conv(name + ".conv3", b, Square(planes * 4, 1));
  int shortcut = project ? g.Conv(name + ".downsample", input, Square(planes * 4, 1, stride))
                         : input;
  return g.Sum(name + ".add", {c, shortcut});
}

int InceptionA(GraphBuilder& g, const std::string& n, int x, int pool_features) {
  int b1 = g.Conv(n + ".branch1x1", x, Square(64, 1));
  int b5 = g.Conv(n + ".branch5x5_1", x, Square(48, 1));
  b5 = g.Conv(n + ".branch5x5_2", b5, Square(64, 5, 1, 2));
  int b3 = g.Conv(n + ".branch3x3dbl_1", x, Square(64, 1));
  b3 = g.Conv(n + ".branch3x3dbl_2", b3, Square(96, 3, 1, 1));
  b3 = g.Conv(n + ".branch3x3dbl_3", b3, Square(96, 3, 1, 1));
  int bp = g.Pool(n + ".avg_pool", x, 3, 1, 1);
  bp = g.Conv(n + ".branch_pool", bp, Square(pool_features, 1));
  return g.Concat(n + ".cat", {b1, b5, b3, bp});
}

int InceptionB(GraphBuilder& g, const std::string& n, int x) {
  int b3 = g.Conv(n + ".branch3x3", x, Square(384, 3, 2));
  int bd = g.Conv(n + ".branch3x3dbl_1", x, Square(64, 1));
  bd = g.Conv(n + ".branch3x3dbl_2", bd, Square(96, 3, 1, 1));
  bd = g.Conv(n + ".branch3x3dbl_3", bd, Square(96, 3, 2));
  int bp = g.Pool(n + ".max_pool", x, 3, 2, 0);
  return g.Concat(n + ".cat", {b3, bd, bp});
}

ConvSpec Row(int out) { return {out, 1, 7, 1, 0, 3}; }  // 1x7, padding (0, 3)
ConvSpec Col(int out) { return {out, 7, 1, 1, 3, 0}; }  // 7x1, padding (3, 0)

int InceptionC(GraphBuilder& g, const std::string& n, int x, int c7) {
  int b1 = g.Conv(n + ".branch1x1", x, Square(192, 1));
  int b7 = g.Conv(n + ".branch7x7_1", x, Square(c7, 1));
  b7 = g.Conv(n + ".branch7x7_2", b7, Row(c7));
  b7 = g.Conv(n + ".branch7x7_3", b7, Col(192));
  int bd = g.Conv(n + ".branch7x7dbl_1", x, Square(c7, 1));
  bd = g.Conv(n + ".branch7x7dbl_2", bd, Col(c7));
  bd = g.Conv(n + ".branch7x7dbl_3", bd, Row(c7));
  bd = g.Conv(n + ".branch7x7dbl_4", bd, Col(c7));
  bd = g.Conv(n + ".branch7x7dbl_5", bd, Row(192));
  int bp = g.Pool(n + ".avg_pool", x, 3, 1, 1);
  bp = g.Conv(n + ".branch_pool", bp, Square(192, 1));
  return g.Concat(n + ".cat", {b1, b7, bd, bp});
}

int InceptionD(GraphBuilder& g, const std::string& n, int x) {
  int b3 = g.Conv(n + ".branch3x3_1", x, Square(192, 1));
  b3 = g.Conv(n + ".branch3x3_2", b3, Square(320, 3, 2));
  int b7 = g.Conv(n + ".branch7x7x3_1", x, Square(192, 1));
  b7 = g.Conv(n + ".branch7x7x3_2", b7, Row(192));
  b7 = g.Conv(n + ".branch7x7x3_3", b7, Col(192));
  b7 = g.Conv(n + ".branch7x7x3_4", b7, Square(192, 3, 2));
  int bp = g.Pool(n + ".max_pool", x, 3, 2, 0);
  return g.Concat(n + ".cat", {b3, b7, bp});
}

// The 1x3 and 3x1 convolutions after a shared input, joined by torchvision's inner torch.cat.
int SplitPair(GraphBuilder& g, const std::string& n, int x) {
  int a = g.Conv(n + "a", x, {384, 1, 3, 1, 0, 1});
  int b = g.Conv(n + "b", x, {384, 3, 1, 1, 1, 0});
  return g.Concat(n + ".cat", {a, b});
}

int InceptionE(GraphBuilder& g, const std::string& n, int x) {
  int b1 = g.Conv(n + ".branch1x1", x, Square(320, 1));
  int b3 = g.Conv(n + ".branch3x3_1", x, Square(384, 1));
  b3 = SplitPair(g, n + ".branch3x3_2", b3);
  int bd = g.Conv(n + ".branch3x3dbl_1", x, Square(448, 1));
  bd = g.Conv(n + ".branch3x3dbl_2", bd, Square(384, 3, 1, 1));
  bd = SplitPair(g, n + ".branch3x3dbl_3", bd);
  int bp = g.Pool(n + ".avg_pool", x, 3, 1, 1);
  bp = g.Conv(n + ".branch_pool", bp, Square(192, 1));
  return g.Concat(n + ".cat", {b1, b3, bd, bp});
}

}  // namespace

ModelProfile Vgg16(int global_batch, const burst::NetworkModel& network,
                   const DeviceModel& device) {
  GraphBuilder g("vgg16", global_batch, network, device, {3, 224, 224});
  const std::vector<std::vector<int>> stages = {
      {64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  int x = -1;
  for (size_t s = 0; s < stages.size(); ++s) {
    for (size_t k = 0; k < stages[s].size(); ++k) {
      std::string name = "conv" + std::to_string(s + 1) + "_" + std::to_string(k + 1);
      x = g.Conv(name, x, Square(stages[s][k], 3, 1, 1), /*bias=*/true);
    }
    x = g.Pool("pool" + std::to_string(s + 1), x, 2, 2, 0);
  }
  x = g.Linear("fc6", x, 4096);
  x = g.Linear("fc7", x, 4096);
  g.Linear("fc8", x, 1000);
  return g.Finish();
}

ModelProfile WideResNet101_2(int global_batch, const burst::NetworkModel& network,
                             const DeviceModel& device) {
  GraphBuilder g("wide_resnet101_2", global_batch, network, device, {3, 224, 224});
  int x = g.Conv("conv1", -1, Square(64, 7, 2, 3));
  x = g.Pool("maxpool", x, 3, 2, 1);
  const int blocks[] = {3, 4, 23, 3};
  for (int stage = 0; stage < 4; ++stage) {
    int planes = 64 << stage;
    for (int k = 0; k < blocks[stage]; ++k) {
      std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(k);
      int stride = (k == 0 && stage > 0) ? 2 : 1;
      x = Bottleneck(g, name, x, planes, stride, /*project=*/k == 0);
    }
  }
  x = g.GlobalPool("avgpool", x);
  g.Linear("fc", x, 1000);
  return g.Finish();
}

ModelProfile InceptionV3(int global_batch, const burst::NetworkModel& network,
                         const DeviceModel& device) {
  GraphBuilder g("inception_v3", global_batch, network, device, {3, 299, 299});
  int x = g.Conv("Conv2d_1a_3x3", -1, Square(32, 3, 2));
  x = g.Conv("Conv2d_2a_3x3", x, Square(32, 3));
  x = g.Conv("Conv2d_2b_3x3", x, Square(64, 3, 1, 1));
  x = g.Pool("maxpool1", x, 3, 2, 0);
  x = g.Conv("Conv2d_3b_1x1", x, Square(80, 1));
  x = g.Conv("Conv2d_4a_3x3", x, Square(192, 3));
  x = g.Pool("maxpool2", x, 3, 2, 0);
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
  g.Linear("fc", x, 1000);
  return g.Finish();
}

double ParameterCount(const ModelProfile& profile) {
  double bytes = 0.0;
  for (const Layer& layer : profile.layers) bytes += layer.param_bytes;
  return bytes / kBytesPerValue;
}

}  // namespace elastic::bench
