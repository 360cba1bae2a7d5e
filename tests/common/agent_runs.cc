// Helpers for integration tests that run elastic-agent under mpirun.
#include "tests/common/agent_runs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include "tests/common/time_scale.h"

namespace elastic::testing {

namespace fs = std::filesystem;

std::string AgentPath() { return ELASTIC_BINARY_DIR "/agent/elastic-agent"; }

std::string FmnistJobText(const FmnistJob& job) {
  std::string text =
      "[model]\nname = \"fmnist_cnn\"\n"
      "[data]\npath = \"/usr/share/datasets/fashion-mnist\"\n"
      "[train]\n" +
      (job.ests > 0 ? "ests = " + std::to_string(job.ests) + "\n" : std::string()) +
      "global_batch = " + std::to_string(job.global_batch) +
      "\nlr = 0.05\nmomentum = 0.9\nseed = " + std::to_string(job.seed) +
      "\nsteps = " + std::to_string(job.steps) + "\n";
  if (!job.determinism.empty()) text += "determinism = \"" + job.determinism + "\"\n";
  if (!job.plan.empty()) text += "plan = \"" + job.plan + "\"\n";
  text += "threads = 1\nlog_every = " + std::to_string(job.log_every) + "\n" + job.extra_train;
  if (!job.checkpoint_dir.empty()) {
    text += "[checkpoint]\ndir = \"" + job.checkpoint_dir + "\"\n" + job.extra_checkpoint;
  }
  return text;
}

std::string WriteFmnistJobConfig(const TempDir& dir, const std::string& name, int ests, int seed,
                                 int steps, const std::string& extra_train,
                                 const std::string& extra_checkpoint) {
  FmnistJob job;
  job.ests = ests;
  job.seed = seed;
  job.steps = steps;
  job.log_every = 500;
  job.extra_train = extra_train;
  job.checkpoint_dir = (dir.path() / name).string();
  job.extra_checkpoint = extra_checkpoint;
  return dir.Write(name + ".toml", FmnistJobText(job)).string();
}

std::string MpirunAgentCommand(int ranks, const fs::path& config, const std::string& extra,
                               int timeout_s) {
  std::string command = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  if (timeout_s > 0) command += "timeout -k 5 " + std::to_string(ScaledSeconds(timeout_s)) + " ";
  return command + "mpirun --oversubscribe -np " + std::to_string(ranks) + " " + AgentPath() +
         " train --config " + ShellQuote(config.string()) + extra;
}

std::string FinalHash(const CommandResult& run) {
  static const std::regex line(R"(elastic-agent: step=\d+ loss=\S+ params_sha256=([0-9a-f]{64}))");
  std::smatch match;
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, match, line)) << run.output;
  return match.empty() ? "" : match[1].str();
}

std::string LastParamsHash(const std::string& output) {
  static const std::regex hash("params_sha256=([0-9a-f]{64})");
  std::string last;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), hash);
       it != std::sregex_iterator(); ++it) {
    last = (*it)[1];
  }
  return last;
}

std::string OneProcessParamsHash(const std::string& config) {
  return LastParamsHash(RunCommand(ShellQuote(AgentPath()) + " train --config " + config).output);
}

std::vector<std::string> MatchingLines(const std::string& text, const std::string& pattern) {
  std::vector<std::string> lines;
  const std::regex line("[^\n]*(" + pattern + ")[^\n]*");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator();
       ++it) {
    lines.push_back(it->str());
  }
  return lines;
}

bool WaitForOutput(const std::string& path, const std::string& pattern, int timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    if (!MatchingLines(RunCommand("cat " + ShellQuote(path)).output, pattern).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return false;
}

pid_t FindAgentRank(const fs::path& config, int rank) {
  const std::string wanted_rank = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  const std::string agent = AgentPath();
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(entry.path() / "cmdline"), environ(entry.path() / "environ");
    std::string args((std::istreambuf_iterator<char>(cmdline)), {});
    if (args.find(agent) != 0 || args.find(config.string()) == std::string::npos) continue;
    std::string env((std::istreambuf_iterator<char>(environ)), {});
    if (env.find('\0' + wanted_rank + '\0') != std::string::npos) return std::stoi(name);
  }
  return 0;
}

}  // namespace elastic::testing
