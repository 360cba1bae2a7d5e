// `elastic-agent profile-layers` end to end: the built binary profiles fmnist_cnn and
// Inception-v3 (75 px) layer by layer, and the built `elastic-plan burst` plans both profiles
// within the amplification limit. One process each, no MPI, no Slurm.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/common/agent_runs.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;

std::string PlanTool() { return ELASTIC_BINARY_DIR "/tools/elastic-plan"; }

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class LayerProfile : public ::testing::Test {
 protected:
  // Profiles `model` with `flags` into a file and checks it; returns its path.
  fs::path Profile(const std::string& model, const std::string& flags, size_t layers) {
    const fs::path out = dir_.path() / (model + ".json");
    CommandResult run = RunCommand("timeout -k 5 120 " + AgentPath() +
                                   " profile-layers --model " + model + " --batches 1,2 " +
                                   flags + " --reps 2 --warmup 1 --out " +
                                   ShellQuote(out.string()));
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("profile-layers: model=" + model + " layers=" +
                              std::to_string(layers)),
              std::string::npos)
        << run.output;
    nlohmann::json profile = nlohmann::json::parse(ReadAll(out));
    EXPECT_EQ(profile["format"], "elastic-burst-profile/1");
    EXPECT_EQ(profile["layers"].size(), layers);
    for (const auto& layer : profile["layers"]) {
      EXPECT_EQ(layer["fwd_bwd_ms"].size(), 2u) << layer["name"];
      EXPECT_GT(layer["fwd_bwd_ms"][0][1].get<double>(), 0.0) << layer["name"];
    }
    return out;
  }

  // elastic-plan burst on 8 GPUs, limit 2: every layer on >= 1 GPU within the limit.
  void ExpectPlan(const fs::path& profile, size_t layers) {
    CommandResult run = RunCommand("timeout -k 5 60 " + PlanTool() + " burst --profile " +
                                   ShellQuote(profile.string()) +
                                   " --gpus 8 --amp-limit 2 --json 2>&1");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    nlohmann::json plan = nlohmann::json::parse(run.output);
    ASSERT_EQ(plan["layers"].size(), layers);
    for (const auto& layer : plan["layers"]) {
      EXPECT_GE(layer["gpus"].get<int>(), 1) << layer["name"];
      EXPECT_LE(layer["amplification"].get<double>(), 2.0 + 1e-9) << layer["name"];
    }
    EXPECT_LE(plan["max_layer_amplification"].get<double>(), 2.0 + 1e-9);
    EXPECT_GT(plan["iteration_ms"].get<double>(), 0.0);
    EXPECT_GE(plan["search_ms"].get<double>(), 0.0);
  }

  TempDir dir_;
};

TEST_F(LayerProfile, FmnistCnnProfileIsPlanned) {
  const fs::path profile = Profile("fmnist_cnn", "--global-batch 64", 4);
  ExpectPlan(profile, 4);
}

TEST_F(LayerProfile, InceptionV3At75PixelsIsPlanned) {
  const fs::path profile =
      Profile("inception_v3", "--image-size 75 --classes 100 --global-batch 64 "
                              "--bandwidth-gbps 100 --latency-us 20", 124);
  nlohmann::json json = nlohmann::json::parse(ReadAll(profile));
  EXPECT_EQ(json["network"]["bandwidth_gbps"], 100.0);
  EXPECT_EQ(json["network"]["latency_us"], 20.0);
  EXPECT_EQ(json["global_batch"], 64);
  ExpectPlan(profile, 124);
}

TEST_F(LayerProfile, BadFlagsExitWithStatus2) {
  for (const std::string& flags :
       {std::string("--model vgg16 --batches 2,1 --out x.json"),
        std::string("--model nope --batches 1 --out x.json"),
        std::string("--model inception_v3 --batches 1 --image-size 32 --out x.json"),
        std::string("--batches 1 --out x.json")}) {
    CommandResult run = RunCommand(AgentPath() + " profile-layers " + flags);
    EXPECT_EQ(run.exit_code, 2) << flags << "\n" << run.output;
    EXPECT_NE(run.output.find("elastic-agent: profile-layers: "), std::string::npos)
        << run.output;
  }
}

}  // namespace
}  // namespace elastic::testing
