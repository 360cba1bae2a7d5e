// `elastic-agent eval`: the real binary on a checkpoint that `train` wrote (synthetic IDX data and,
// where installed, the real Fashion-MNIST test split): the report's shape and class names, that it
// is deterministic, that it follows the newest valid checkpoint past a corrupt one, and its
// errors (no checkpoint.dir, no checkpoint). No LibTorch in this file.
#include "agent/eval/eval_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "agent/checkpoint/checkpoint_dir.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/agent/idx_fixture.h"

namespace elastic::agent {
namespace {

namespace fs = std::filesystem;
using elastic::testing::CommandResult;
using elastic::testing::RunCommand;
using elastic::testing::ShellQuote;

constexpr const char* kRealData = "/usr/share/datasets/fashion-mnist";

std::string Agent() { return ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent"); }

// A job over `data` with 4 ESTs checkpointing every 4 steps into <dir>/ckpt.
fs::path WriteConfig(elastic::testing::TempDir& dir, const std::string& data, int steps,
                     bool with_checkpoints = true) {
  std::ostringstream text;
  text << "[data]\npath = \"" << data << "\"\n[train]\nests = 4\nglobal_batch = 64\n"
       << "lr = 0.05\nsteps = " << steps << "\nlog_every = 0\n";
  if (with_checkpoints) text << "[checkpoint]\ndir = \"ckpt\"\nevery_steps = 4\n";
  return dir.Write("job.toml", text.str());
}

CommandResult RunAgent(const std::string& command, const fs::path& config) {
  return RunCommand(Agent() + " " + command + " --config " + ShellQuote(config.string()));
}

// Synthetic data: 256 training images, 100 test images (10 per class).
class EvalCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directory(dir_.path() / "data");
    agent::testing::WriteTrainSplit(dir_.path() / "data", 256, /*gzip=*/false);
    agent::testing::WriteTestSplit(dir_.path() / "data", 100, /*gzip=*/true);
  }
  elastic::testing::TempDir dir_;
};

TEST_F(EvalCommand, ReportsOverallAndPerClassAccuracyOfTheNewestCheckpoint) {
  fs::path config = WriteConfig(dir_, "data", 8);
  ASSERT_EQ(RunAgent("train", config).exit_code, 0);
  CommandResult eval = RunAgent("eval", config);
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  const std::regex head(
      R"(^elastic-agent: eval checkpoint=\S+ckpt-0000000008\.elck step=8 accuracy=(\d\.\d{4}) )"
      R"(correct=(\d+) total=100\n)");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(eval.output, match, head)) << eval.output;
  int class_correct = 0;
  for (int c = 0; c < kFashionMnistClassCount; ++c) {
    // The names hold no regex metacharacters ("T-shirt/top", "Ankle boot").
    const std::regex line("\nclass=" + std::to_string(c) + " name=\"" +
                          std::string(kFashionMnistClasses[static_cast<std::size_t>(c)]) +
                          R"(" accuracy=\d\.\d{4} correct=(\d+) total=10\n)");
    std::smatch cls;
    ASSERT_TRUE(std::regex_search(eval.output, cls, line)) << c << "\n" << eval.output;
    class_correct += std::stoi(cls[1]);
  }
  EXPECT_EQ(class_correct, std::stoi(match[2]));
  EXPECT_EQ(kFashionMnistClasses[0], "T-shirt/top");
  EXPECT_EQ(kFashionMnistClasses[9], "Ankle boot");
  // Deterministic: the same checkpoint gives the same bytes.
  EXPECT_EQ(RunAgent("eval", config).output, eval.output);
}

TEST_F(EvalCommand, SkipsACorruptNewestCheckpointWithAWarning) {
  fs::path config = WriteConfig(dir_, "data", 8);
  ASSERT_EQ(RunAgent("train", config).exit_code, 0);
  const fs::path newest = dir_.path() / "ckpt" / "ckpt-0000000008.elck";
  ASSERT_TRUE(fs::exists(newest));
  {
    const auto middle = static_cast<std::streamoff>(fs::file_size(newest) / 2);
    std::fstream file(newest, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(middle);
    const char byte = static_cast<char>(file.get() ^ 0x5a);
    file.seekp(middle);
    file.put(byte);
  }
  CommandResult eval = RunAgent("eval", config);
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  EXPECT_NE(eval.output.find("elastic-agent: warning: checkpoint " + newest.string()),
            std::string::npos)
      << eval.output;
  EXPECT_NE(eval.output.find("ckpt-0000000004.elck step=4 "), std::string::npos) << eval.output;
}

TEST_F(EvalCommand, WithoutACheckpointFails) {
  CommandResult unset = RunAgent("eval", WriteConfig(dir_, "data", 8, /*with_checkpoints=*/false));
  EXPECT_EQ(unset.exit_code, 2);
  EXPECT_EQ(unset.output,
            "elastic-agent: eval: checkpoint.dir is not set: no checkpoint to evaluate\n");
  CommandResult none = RunAgent("eval", WriteConfig(dir_, "data", 8));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.output.find("no valid checkpoint to evaluate"), std::string::npos) << none.output;
}

TEST_F(EvalCommand, MissingTestSplitFailsNamingTheFile) {
  fs::path config = WriteConfig(dir_, "data", 4);
  ASSERT_EQ(RunAgent("train", config).exit_code, 0);
  fs::remove(dir_.path() / "data" / "t10k-labels-idx1-ubyte.gz");
  CommandResult eval = RunAgent("eval", config);
  EXPECT_EQ(eval.exit_code, 1);
  EXPECT_NE(eval.output.find("t10k-labels-idx1-ubyte"), std::string::npos) << eval.output;
}

// The real test split: 10,000 images, 1,000 per class; 60 steps of training are well above
// chance (10 %).
TEST(EvalCommandRealData, LearnsFashionMnist) {
  if (!fs::exists(kRealData)) GTEST_SKIP() << kRealData << " missing (dataset-fashion-mnist)";
  elastic::testing::TempDir dir;
  fs::path config = WriteConfig(dir, kRealData, 60);
  ASSERT_EQ(RunAgent("train", config).exit_code, 0);
  CommandResult eval = RunAgent("eval", config);
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(eval.output, match,
                                std::regex(R"(accuracy=(\d\.\d{4}) correct=\d+ total=10000\n)")))
      << eval.output;
  EXPECT_GT(std::stod(match[1]), 0.5) << eval.output;
  EXPECT_NE(eval.output.find("class=9 name=\"Ankle boot\" "), std::string::npos);
  EXPECT_NE(eval.output.find(" total=1000\n"), std::string::npos);
}

}  // namespace
}  // namespace elastic::agent
