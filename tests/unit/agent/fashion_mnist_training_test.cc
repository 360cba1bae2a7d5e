// End-to-end `train` on the installed Fashion-MNIST: 20 steps lower the loss, and the output ends
// with the contract line of design.md §2; the host probe changes no result. Skips when
// dataset-fashion-mnist is not installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "agent/train/train_command.h"

namespace elastic::agent {
namespace {

constexpr const char* kInstalledDataset = "/usr/share/datasets/fashion-mnist";

// Two ESTs on the installed dataset, a progress line after every step.
JobConfig TwoEstJob() {
  JobConfig config;
  config.data.path = kInstalledDataset;
  config.train.ests = 2;
  config.train.log_every = 1;
  return config;
}

TEST(FashionMnistTraining, TwentyStepsLowerTheLoss) {
  if (!std::filesystem::is_directory(kInstalledDataset)) {
    GTEST_SKIP() << kInstalledDataset << " missing (install dataset-fashion-mnist)";
  }
  JobConfig config = TwoEstJob();
  config.train.global_batch = 256;
  std::ostringstream out;
  TrainOutcome outcome = RunTrainCommand(config, TrainOptions{20, true}, out, out);
  EXPECT_EQ(outcome.step, 20);

  std::vector<double> losses;
  std::string line, last;
  std::istringstream lines(out.str());
  const std::regex progress(R"(step=(\d+) loss=([0-9.]+) samples_per_s=[0-9.]+)");
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_match(line, match, progress)) losses.push_back(std::stod(match[2]));
    last = line;
  }
  ASSERT_EQ(losses.size(), 20u) << out.str();
  double tail = (losses[15] + losses[16] + losses[17] + losses[18] + losses[19]) / 5;
  EXPECT_LT(tail, losses[0] - 0.5) << out.str();  // starts near ln(10) = 2.30
  EXPECT_TRUE(std::regex_match(
      last,
      std::regex(R"(elastic-agent: step=20 loss=[0-9]+\.[0-9]{6} params_sha256=[0-9a-f]{64})")))
      << last;
  EXPECT_EQ(last, FormatFinalLine(outcome));
}

// train.host_probe times a kernel of its own before each step: the progress lines gain probe_ms,
// the trained model stays bit for bit what it is without the probe (on 2 intra-op threads, where
// the probe runs on both).
TEST(FashionMnistTraining, HostProbeLeavesTheTrainedModelUnchanged) {
  if (!std::filesystem::is_directory(kInstalledDataset)) GTEST_SKIP();
  JobConfig config = TwoEstJob();
  config.train.threads = 2;
  std::ostringstream plain_out;
  const TrainOutcome plain = RunTrainCommand(config, TrainOptions{4, true}, plain_out, plain_out);
  config.train.host_probe = true;
  std::ostringstream probed_out;
  const TrainOutcome probed =
      RunTrainCommand(config, TrainOptions{4, true}, probed_out, probed_out);
  EXPECT_EQ(probed.params_sha256, plain.params_sha256);
  EXPECT_EQ(probed.loss, plain.loss);

  const std::regex probed_line(R"(step=\d+ loss=[0-9.]+ samples_per_s=[0-9.]+ probe_ms=([0-9.]+))");
  const std::string text = probed_out.str();
  int lines = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), probed_line);
       it != std::sregex_iterator(); ++it, ++lines) {
    EXPECT_GT(std::stod((*it)[1].str()), 0.0) << (*it)[0];
  }
  EXPECT_EQ(lines, 4) << text;
  EXPECT_EQ(plain_out.str().find("probe_ms"), std::string::npos) << plain_out.str();
}

TEST(FashionMnistTraining, NonPrimaryRanksStaySilent) {
  if (!std::filesystem::is_directory(kInstalledDataset)) GTEST_SKIP();
  JobConfig config;
  config.data.path = kInstalledDataset;
  config.train.steps = 2;
  std::ostringstream out;
  TrainOutcome outcome = RunTrainCommand(config, TrainOptions{std::nullopt, false}, out, out);
  EXPECT_EQ(outcome.step, 2);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace elastic::agent
