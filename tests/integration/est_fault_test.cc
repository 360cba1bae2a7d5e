// Faults of EST training on real Open MPI ranks: `kill -9` of one rank mid-run makes the whole
// run fail (mpirun exits non-zero within a timeout instead of hanging in a collective) and the
// checkpoint left behind resumes, on another W, to the same params_sha256 as an undisturbed
// run; a corrupted newest checkpoint is skipped with a warning and the previous one resumes to
// the same bits. Needs mpirun and the Fashion-MNIST package; no Slurm.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/agent_runs.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kData = "/usr/share/datasets/fashion-mnist";
// A run that outlives this is hung: mpirun must notice a dead rank long before.
constexpr int kHangSeconds = 40;

// E = 8 ESTs, 8 samples each; `every_steps` 0 = no periodic checkpoints.
std::string ConfigText(int steps, const fs::path& checkpoint_dir, int every_steps) {
  std::ostringstream text;
  text << "[model]\nname = \"fmnist_cnn\"\n[data]\npath = \"" << kData << "\"\n"
       << "[train]\nests = 8\nglobal_batch = 64\nlr = 0.05\nmomentum = 0.9\nseed = 1\n"
       << "steps = " << steps << "\nthreads = 1\nlog_every = 0\n";
  if (!checkpoint_dir.empty()) {
    text << "[checkpoint]\ndir = \"" << checkpoint_dir.string()
         << "\"\nevery_steps = " << every_steps << "\n";
  }
  return text.str();
}

// Steps of the committed checkpoints in `dir`, ascending.
std::vector<int> CheckpointSteps(const fs::path& dir) {
  std::vector<int> steps;
  if (!fs::exists(dir)) return steps;
  static const std::regex name(R"(ckpt-(\d{10})\.elck)");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, match, name)) steps.push_back(std::stoi(match[1]));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::string CheckpointName(int step) {
  char name[32];
  std::snprintf(name, sizeof name, "ckpt-%010d.elck", step);
  return name;
}

void FlipByteInTheMiddle(const fs::path& path) {
  const auto middle = static_cast<std::streamoff>(fs::file_size(path) / 2);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(middle);
  const char byte = static_cast<char>(file.get() ^ 0x5a);
  file.seekp(middle);
  file.put(byte);
}

class EstFault : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
    if (!fs::exists(kData)) GTEST_SKIP() << kData << " missing (dataset-fashion-mnist)";
  }
  // The final hash of an undisturbed single-rank run without checkpoints stopping at `until`.
  std::string Undisturbed(int until) {
    fs::path config = dir_.Write("undisturbed.toml", ConfigText(2000, "", 0));
    return FinalHash(RunCommand(
        MpirunAgentCommand(1, config, " --until-step " + std::to_string(until), kHangSeconds)));
  }
  TempDir dir_;
};

TEST_F(EstFault, KillNineOfOneRankFailsTheRunAndItsCheckpointResumesBitForBit) {
  const fs::path ckpt = dir_.path() / "ckpt";
  const fs::path config = dir_.Write("kill.toml", ConfigText(2000, ckpt, 3));
  const fs::path log = dir_.path() / "kill.log";
  ASSERT_EQ(RunCommand("(" + MpirunAgentCommand(3, config, "", kHangSeconds) + " > " +
                       ShellQuote(log.string()) + " 2>&1; echo exit=$? >> " +
                       ShellQuote(log.string()) + ") < /dev/null > /dev/null 2>&1 &")
                .exit_code,
            0);
  // Kill rank 1 once a periodic checkpoint exists, mid-run.
  const Clock::time_point deadline =
      Clock::now() + std::chrono::seconds(ScaledSeconds(kHangSeconds));
  pid_t rank1 = 0;
  while (Clock::now() < deadline && (rank1 == 0 || CheckpointSteps(ckpt).empty())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    rank1 = FindAgentRank(config, 1);
  }
  ASSERT_NE(rank1, 0) << "rank 1 never started";
  ASSERT_FALSE(CheckpointSteps(ckpt).empty())
      << "no checkpoint within " << ScaledSeconds(kHangSeconds) << " s";
  ASSERT_EQ(kill(rank1, SIGKILL), 0);

  std::string output;
  while (output.find("exit=") == std::string::npos) {
    ASSERT_LT(Clock::now(), deadline + std::chrono::seconds(10)) << "no exit status\n" << output;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    output = RunCommand("cat " + ShellQuote(log.string())).output;
  }
  std::smatch status;
  ASSERT_TRUE(std::regex_search(output, status, std::regex(R"(exit=(\d+))")));
  EXPECT_NE(status[1], "0") << output;
  EXPECT_NE(status[1], "124") << "mpirun hung after a rank died; timeout killed it\n" << output;
  for (int rank : {0, 1, 2})
    EXPECT_EQ(FindAgentRank(config, rank), 0) << "rank " << rank << " left";

  // The newest surviving checkpoint resumes on W = 2 exactly like a run never disturbed.
  const std::vector<int> steps = CheckpointSteps(ckpt);
  ASSERT_FALSE(steps.empty());
  const int until = steps.back() + 4;
  const fs::path resume = dir_.Write("resume.toml", ConfigText(2000, ckpt, 0));
  CommandResult resumed = RunCommand(
      MpirunAgentCommand(2, resume, " --until-step " + std::to_string(until), kHangSeconds));
  EXPECT_NE(resumed.output.find("resuming from " + (ckpt / CheckpointName(steps.back())).string()),
            std::string::npos)
      << resumed.output;
  EXPECT_EQ(FinalHash(resumed), Undisturbed(until));
}

TEST_F(EstFault, CorruptNewestCheckpointFallsBackToThePreviousWithTheSameResult) {
  const fs::path ckpt = dir_.path() / "ckpt";
  const fs::path config = dir_.Write("corrupt.toml", ConfigText(2000, ckpt, 2));
  ASSERT_FALSE(FinalHash(RunCommand(MpirunAgentCommand(2, config, " --until-step 6", kHangSeconds)))
                   .empty());
  ASSERT_EQ(CheckpointSteps(ckpt), (std::vector<int>{4, 6}));
  const fs::path newest = ckpt / CheckpointName(6);
  FlipByteInTheMiddle(newest);

  CommandResult resumed =
      RunCommand(MpirunAgentCommand(3, config, " --until-step 9", kHangSeconds));
  EXPECT_NE(
      resumed.output.find("elastic-agent: warning: checkpoint " + newest.string() + " is corrupt"),
      std::string::npos)
      << resumed.output;
  EXPECT_NE(
      resumed.output.find("resuming from " + (ckpt / CheckpointName(4)).string() + " at step 4"),
      std::string::npos)
      << resumed.output;
  EXPECT_EQ(FinalHash(resumed), Undisturbed(9));
}

}  // namespace
}  // namespace elastic::testing
