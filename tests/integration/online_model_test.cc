// Rubick's online model for a job nothing describes (issue 27 item 1), on a live cluster: a
// user's TorchScript module (an nn.Sequential CNN made by Debian's python3-torch) has neither a
// train.perf_model nor a built-in description. Its first generation runs the requested plan and
// is measured; the agent's model-size line bootstraps a model that this measurement calibrates;
// the grown and the shrunk generations are chosen and predicted with it, each measured against
// its prediction and refitted. The job ends with the bits of one uninterrupted process.
#include <gtest/gtest.h>

#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "tests/common/agent_runs.h"
#include "tests/common/elasticd_cluster.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

class OnlineModel : public ElasticdClusterSuite {
 protected:
  static void SetUpTestSuite() {
    if (RunCommand(std::string(kPython) + " -c 'import torch'").exit_code != 0) return;
    artifacts_ = new TempDir;
    const CommandResult made = RunCommand(std::string(kPython) + " " + ELASTIC_SOURCE_DIR +
                                          "/tests/python/make_test_artifacts.py " +
                                          artifacts_->path().string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
    StartWithElasticd();
  }
  static void TearDownTestSuite() {
    delete artifacts_;
    artifacts_ = nullptr;
  }
  void SetUp() override {
    if (!artifacts_) GTEST_SKIP() << kPython << " has no torch (install python3-torch)";
  }
  static std::string Config(const TempDir& dir, const std::string& name, int steps) {
    const std::string text =
        "[model]\ntorchscript = \"" + (artifacts_->path() / "seq_cnn.pt").string() +
        "\"\n[data]\nformat = \"tensors\"\npath = \"" + (artifacts_->path() / "images").string() +
        "\"\n[train]\nests = 4\nglobal_batch = 32\nlr = 0.05\nmomentum = 0.9\nseed = 3\n"
        "steps = " + std::to_string(steps) + "\nthreads = 1\nlog_every = 20\n"
        "[checkpoint]\ndir = \"" + (dir.path() / name).string() + "\"\n";
    return dir.Write(name + ".toml", text).string();
  }
  static TempDir* artifacts_;
};

TempDir* OnlineModel::artifacts_ = nullptr;

TEST_F(OnlineModel, ATorchScriptJobGetsAModelFromItsOwnGenerations) {
  TempDir dir;
  constexpr int kSteps = 5000;  // ~10 ms a step on one rank: the resizes are done by ~2,000
  const std::string config = Config(dir, "job", kSteps);
  const std::string out = (dir.path() / "job.out").string();
  const auto [job, hold] = GrowToAllFourNodes(config, out);
  ASSERT_FALSE(job.empty());
  // The grown generation is measured (its first 5 reports) before a rigid job shrinks it.
  EXPECT_TRUE(WaitForOutput(out, "generation 2: measured .* vs predicted", 120))
      << RunCommand("cat " + ShellQuote(out)).output;
  const std::string rigid = Submit("-N 3 --exclusive --wrap 'sleep 3600'");
  EXPECT_FALSE(WaitForNodes(job, 1, "1-4", 120).empty()) << AdminComment(job) << "\n" << Log();
  const std::string state = cluster().WaitForJob(job, 900);
  cluster().Run("scancel " + rigid);
  const std::string text = RunCommand("cat " + ShellQuote(out)).output;
  ASSERT_EQ(state, "COMPLETED") << text;
  EXPECT_EQ(cluster().WaitForJob(hold, 10), "COMPLETED");

  for (const char* what : {"performance model", "generation [0-9]+: (plan|measured)"}) {
    for (const std::string& line : MatchingLines(text, what)) std::cout << line << "\n";
  }
  EXPECT_NE(text.find("performance model: none yet: no train.perf_model and no built-in model "
                      "of torchscript"),
            std::string::npos)
      << text;
  EXPECT_FALSE(MatchingLines(text, "performance model: bootstrapped for torchscript from the agent's "
                              "count \\([0-9]+ parameters, [0-9]+ block\\(s\\)\\)")
                   .empty())
      << text;
  EXPECT_FALSE(MatchingLines(text, "generation 1: measured [0-9.]+ samples/s over its first 5 reports "
                              "\\(no prediction yet\\)")
                   .empty())
      << text;
  EXPECT_FALSE(MatchingLines(text, "calibrated compute x").empty()) << text;
  // The grown and the shrunk generations: chosen with the model, measured against it.
  const std::vector<std::string> predicted =
      MatchingLines(text, "generation [0-9]+: plan [a-z-]+ \\(predicted [0-9.]+ samples/s");
  EXPECT_GE(predicted.size(), 2u) << text;
  const std::vector<std::string> compared =
      MatchingLines(text, "generation [0-9]+: measured [0-9.]+ samples/s vs predicted [0-9.]+ over its "
                     "first 5 reports: error [-+][0-9.]+%");
  EXPECT_GE(compared.size(), 2u) << text;
  EXPECT_FALSE(MatchingLines(text, "refit on 0 earlier \\+ 2 measured point\\(s\\), 1 parameter\\(s\\) "
                              "free")
                   .empty())
      << text;
  EXPECT_FALSE(MatchingLines(text, "performance model saved in ").empty()) << text;

  // Chosen under d1: bitwise-safe plans, so one process's bits.
  const std::string expected = OneProcessParamsHash(Config(dir, "reference", kSteps));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(LastParamsHash(text), expected) << text;
}

}  // namespace
}  // namespace elastic::testing
