// Layer-graph models (agent/model/layer_graph_model.h) against torchvision's parameter counts
// and bench/burst_graphs' profiles, layer-by-layer execution, and profile-layers' profiler and
// command line (agent/profile/layer_profile*.h).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "agent/common/errors.h"
#include "agent/model/fmnist_cnn.h"
#include "agent/model/layer_graph_model.h"
#include "agent/profile/layer_profile.h"
#include "agent/profile/layer_profile_args.h"
#include "bench/burst_graphs.h"
#include "perf/burst/profile_json.h"

namespace elastic::agent {
namespace {

int64_t ParameterCount(torch::nn::Module& module) {
  int64_t count = 0;
  for (const torch::Tensor& p : module.parameters()) count += p.numel();
  return count;
}

// Names, edges, parameter bytes and (at the full image size) activation sizes equal the
// bench's architecture-exact profile.
void ExpectSameGraph(LayerGraphModel& model, const burst::ModelProfile& bench) {
  ASSERT_EQ(model.layers().size(), bench.layers.size()) << model.label();
  torch::NoGradGuard no_grad;
  model.eval();
  const int64_t size = model.default_image_size();
  std::vector<torch::Tensor> outputs = model.ForwardAll(torch::randn({1, 3, size, size}));
  for (size_t i = 0; i < bench.layers.size(); ++i) {
    const GraphLayer& layer = model.layers()[i];
    const burst::Layer& expected = bench.layers[i];
    EXPECT_EQ(layer.name, expected.name) << i;
    EXPECT_EQ(layer.inputs, expected.inputs) << layer.name;
    double param_bytes = 0.0;
    for (const torch::Tensor& p : layer.module->LayerParameters()) param_bytes += 4.0 * p.numel();
    EXPECT_EQ(param_bytes, expected.param_bytes) << layer.name;
    EXPECT_EQ(4.0 * outputs[i].numel(), expected.output_bytes_per_sample) << layer.name;
  }
}

TEST(LayerGraphModel, Vgg16MatchesTorchvisionAndTheBenchGraph) {
  torch::manual_seed(0);
  auto model = MakeLayerGraphModel("vgg16", 1000);
  ASSERT_TRUE(model);
  EXPECT_EQ(ParameterCount(*model), 138357544);
  ExpectSameGraph(*model, bench::Vgg16(256, {}));
}

TEST(LayerGraphModel, WideResNet101_2MatchesTorchvisionAndTheBenchGraph) {
  torch::manual_seed(0);
  auto model = MakeLayerGraphModel("wide_resnet101_2", 1000);
  ASSERT_TRUE(model);
  EXPECT_EQ(ParameterCount(*model), 126886696);
  ExpectSameGraph(*model, bench::WideResNet101_2(256, {}));
}

TEST(LayerGraphModel, InceptionV3MatchesTorchvisionAndTheBenchGraph) {
  torch::manual_seed(0);
  auto model = MakeLayerGraphModel("inception_v3", 1000);
  ASSERT_TRUE(model);
  EXPECT_EQ(ParameterCount(*model), 23834568);  // without the auxiliary head
  ExpectSameGraph(*model, bench::InceptionV3(256, {}));
}

TEST(LayerGraphModel, FmnistCnnIsAChainOfItsFourBlocks) {
  auto model = MakeLayerGraphModel("fmnist_cnn", 10);
  ASSERT_TRUE(model);
  EXPECT_EQ(ParameterCount(*model), ParameterCount(*std::make_shared<FmnistCnn>()));
  ASSERT_EQ(model->layers().size(), 4u);
  EXPECT_TRUE(model->layers()[0].inputs.empty());
  EXPECT_EQ(model->layers()[3].inputs, std::vector<int>{2});
  EXPECT_EQ(model->layers()[3].name, "fc2");
  EXPECT_FALSE(MakeLayerGraphModel("fmnist_cnn", 5));
  EXPECT_FALSE(MakeLayerGraphModel("resnet50", 1000));
}

// Running the layers one at a time (fresh calls, in order) gives the whole forward bit for bit,
// dropout included (same generator state), at small images and a few classes.
TEST(LayerGraphModel, LayerByLayerForwardEqualsTheWholeForwardBitwise) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"fmnist_cnn", 28}, {"vgg16", 32}, {"wide_resnet101_2", 32}, {"inception_v3", 75}};
  for (const auto& [name, size] : cases) {
    torch::manual_seed(3);
    auto model = MakeLayerGraphModel(name, name == "fmnist_cnn" ? 10 : 7);
    const torch::Tensor image = torch::randn({2, model->channels(), size, size});
    torch::manual_seed(11);
    const torch::Tensor whole = model->forward(image);
    torch::manual_seed(11);
    std::vector<torch::Tensor> outputs;
    for (size_t i = 0; i < model->layers().size(); ++i) {
      outputs.push_back(model->ForwardLayer(i, model->InputsOf(i, outputs, image)));
    }
    EXPECT_EQ(whole.sizes(), (std::vector<int64_t>{2, name == "fmnist_cnn" ? 10 : 7})) << name;
    EXPECT_TRUE(torch::equal(whole, outputs.back())) << name;
  }
}

TEST(LayerProfile, FmnistProfileHasEveryLayerAndBatchAndRoundTrips) {
  torch::manual_seed(1);
  auto model = MakeLayerGraphModel("fmnist_cnn", 10);
  LayerProfileOptions options;
  options.model = "fmnist_cnn";
  options.batches = {1, 4};
  options.reps = 2;
  options.warmup = 1;
  options.bandwidth_gbps = 80;
  options.latency_us = 5;
  std::ostringstream log;
  burst::ModelProfile profile = ProfileLayers(*model, options, log);
  EXPECT_EQ(burst::ValidateProfile(profile), "");
  EXPECT_EQ(profile.global_batch, 4);
  EXPECT_DOUBLE_EQ(profile.network.bandwidth_bytes_per_s, 10e9);
  EXPECT_DOUBLE_EQ(profile.network.latency_s, 5e-6);
  ASSERT_EQ(profile.layers.size(), 4u);
  EXPECT_EQ(profile.layers[0].output_bytes_per_sample, 16 * 12 * 12 * 4);
  EXPECT_EQ(profile.layers[0].param_bytes, (16 * 25 + 16) * 4);
  EXPECT_EQ(profile.layers[3].output_bytes_per_sample, 10 * 4);
  for (const burst::Layer& layer : profile.layers) {
    ASSERT_EQ(layer.compute.size(), 2u) << layer.name;
    EXPECT_EQ(layer.compute[1].batch, 4);
    EXPECT_GT(layer.compute[0].seconds, 0.0) << layer.name;
  }
  EXPECT_NE(log.str().find("fmnist_cnn batch 4: 4 layers"), std::string::npos) << log.str();
  Result<burst::ModelProfile> parsed =
      burst::ParseProfileJson(burst::ProfileToJson(profile).dump(), "p.json");
  ASSERT_EQ(parsed.error, "");
  EXPECT_EQ(parsed->layers[2].inputs, std::vector<int>{1});
}

LayerProfileOptions Parse(std::vector<std::string> args) {
  auto parsed = ParseLayerProfileArgs(args);
  EXPECT_TRUE(std::holds_alternative<LayerProfileOptions>(parsed));
  return std::get<LayerProfileOptions>(parsed);
}

TEST(LayerProfileArgs, DefaultsAndFlags) {
  LayerProfileOptions defaults = Parse({"--model", "vgg16", "--batches", "1,2,4", "--out", "p"});
  EXPECT_EQ(defaults.batches, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(defaults.threads, 1);
  EXPECT_EQ(defaults.reps, 5);
  EXPECT_EQ(defaults.warmup, 2);
  EXPECT_EQ(defaults.image_size, 0);
  EXPECT_EQ(defaults.global_batch, 0);
  EXPECT_EQ(defaults.bandwidth_gbps, 200.0);
  LayerProfileOptions set = Parse({"--model", "inception_v3", "--batches", "2", "--out", "p",
                                   "--image-size", "75", "--classes", "10", "--global-batch",
                                   "64", "--bandwidth-gbps", "12.5", "--latency-us", "0",
                                   "--reps", "3", "--warmup", "0", "--threads", "2"});
  EXPECT_EQ(set.image_size, 75);
  EXPECT_EQ(set.classes, 10);
  EXPECT_EQ(set.global_batch, 64);
  EXPECT_EQ(set.bandwidth_gbps, 12.5);
  EXPECT_EQ(set.latency_us, 0.0);
  EXPECT_EQ(set.threads, 2);
  EXPECT_TRUE(std::holds_alternative<ShowText>(ParseLayerProfileArgs({"--help"})));
}

TEST(LayerProfileArgs, BadFlagsNameTheFlagAndTheValue) {
  const std::vector<std::string> base = {"--out", "p"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--batches", "1"}, "--model"},
      {{"--model", "vgg16"}, "--batches"},
      {{"--model", "resnet", "--batches", "1"}, "--model: invalid value \"resnet\""},
      {{"--model", "vgg16", "--batches", "2,1"}, "--batches: invalid value \"2,1\""},
      {{"--model", "vgg16", "--batches", "0"}, "--batches: invalid value \"0\""},
      {{"--model", "vgg16", "--batches", "1,"}, "--batches"},
      {{"--model", "inception_v3", "--batches", "1", "--image-size", "74"}, "--image-size"},
      {{"--model", "fmnist_cnn", "--batches", "1", "--image-size", "32"}, "--image-size"},
      {{"--model", "fmnist_cnn", "--batches", "1", "--classes", "5"}, "--classes"},
      {{"--model", "vgg16", "--batches", "1", "--bandwidth-gbps", "0"}, "--bandwidth-gbps"},
      {{"--model", "vgg16", "--batches", "1", "--latency-us", "-1"}, "--latency-us"},
      {{"--model", "vgg16", "--batches", "1", "--reps", "0"}, "--reps"},
      {{"--model", "vgg16", "--batches", "1", "--threads", "x"}, "--threads"},
      {{"--model", "vgg16", "--batches", "1", "--bogus"}, "bogus"},
  };
  for (const auto& [args, expected] : cases) {
    std::vector<std::string> all = args;
    all.insert(all.end(), base.begin(), base.end());
    try {
      ParseLayerProfileArgs(all);
      ADD_FAILURE() << "accepted " << expected;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("profile-layers"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace elastic::agent
