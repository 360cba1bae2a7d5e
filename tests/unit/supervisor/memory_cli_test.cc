// elastic-plan memory: one `plan=<name> ranks=<W> bytes=<n>` line per plan the agent can run, the
// bytes those of the supervisor's estimator, and clear refusals (the binary, run as a user would).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "perf/rubick/agent_memory.h"
#include "perf/rubick/default_perf_model.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::agent {
namespace {

using elastic::testing::RunCommand;
using elastic::testing::ShellQuote;

const std::string kPlan = ELASTIC_BINARY_DIR "/tools/elastic-plan";

class MemoryCli : public ::testing::Test {
 protected:
  std::string Config(const std::string& train_extra) {
    return ShellQuote(dir_.Write("job.toml", "[model]\nname = \"fmnist_cnn\"\n[train]\n"
                                             "ests = 8\nglobal_batch = 256\n" + train_extra)
                          .string());
  }
  elastic::testing::CommandResult Run(const std::string& args) {
    // stdout only in `output`: the plan lines; stderr to a file of its own.
    return RunCommand(ShellQuote(kPlan) + " memory " + args + " 2>" +
                      ShellQuote((dir_.path() / "stderr").string()));
  }
  elastic::testing::TempDir dir_;
};

// name -> bytes of every `plan=... ranks=W bytes=...` line; fails on any other line.
std::map<std::string, long long> Lines(const std::string& output, int ranks) {
  std::map<std::string, long long> plans;
  const std::regex line("plan=([a-z-]+) ranks=([0-9]+) bytes=([0-9]+)");
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = output.find('\n', at);
    const std::string text = output.substr(at, end - at);
    std::smatch m;
    EXPECT_TRUE(std::regex_match(text, m, line)) << text;
    if (m.size() == 4) {
      EXPECT_EQ(std::stoi(m[2]), ranks) << text;
      plans[m[1]] = std::stoll(m[3]);
    }
    at = end == std::string::npos ? output.size() : end + 1;
  }
  return plans;
}

TEST_F(MemoryCli, PrintsTheSupervisorsEstimateForEveryRunnablePlan) {
  PlanRequest request;
  request.ests = 8;
  request.global_batch = 256;
  const perf::ModelDesc model = BuiltInPerfModel("fmnist_cnn")->model;
  for (int ranks : {1, 2, 4}) {
    auto result = Run("--config " + Config("") + " --ranks " + std::to_string(ranks));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const auto plans = Lines(result.output, ranks);
    // tp is not allowed under d1 (the default), and burst is DeepPool's planner's to size.
    for (Plan word : {Plan::kDp, Plan::kGa, Plan::kGc, Plan::kZeroDp, Plan::kZeroOffload, Plan::kPp}) {
      const std::string name(ToString(word));
      ASSERT_TRUE(plans.count(name)) << name << " on " << ranks << ":\n" << result.output;
      EXPECT_EQ(plans.at(name),
                static_cast<long long>(std::ceil(
                    EstimateAgentMemory(model, request, word, ranks).device_total)))
          << name << " on " << ranks;
    }
    EXPECT_EQ(plans.count("tp"), 0u);
  }
  // E from the command line: fewer ESTs, fewer slots.
  auto fewer = Run("--config " + Config("") + " --ranks 2 --ests 4");
  ASSERT_EQ(fewer.exit_code, 0);
  auto eight = Run("--config " + Config("") + " --ranks 2");
  EXPECT_LT(Lines(fewer.output, 2).at("dp"), Lines(eight.output, 2).at("dp"));
}

TEST_F(MemoryCli, RefusesBadInputNamingIt) {
  const std::string stderr_path = (dir_.path() / "stderr").string();
  auto err = [&] { return elastic::testing::RunCommand("cat " + ShellQuote(stderr_path)).output; };
  EXPECT_EQ(Run("--config " + Config("") + " --ranks 9").exit_code, 2);
  EXPECT_NE(err().find("--ranks: invalid value 9: expected 1 to the job's 8 ESTs"),
            std::string::npos)
      << err();
  EXPECT_EQ(Run("--config " + Config("") + " --ranks 2 --ests 3").exit_code, 2);
  EXPECT_NE(err().find("--ests: invalid value 3"), std::string::npos) << err();
  EXPECT_EQ(Run("--config " + Config("device_memory = \"2.6X\"\n") + " --ranks 1").exit_code, 2);
  EXPECT_NE(err().find("train.device_memory: invalid value \"2.6X\""), std::string::npos) << err();
  EXPECT_EQ(Run("--config " + ShellQuote((dir_.path() / "missing.toml").string()) + " --ranks 1")
                .exit_code,
            2);
  EXPECT_NE(err().find("missing.toml: cannot be read"), std::string::npos) << err();
  // No train.ests: E is the running job's MAX nodes x ranks per node, so --ests says which.
  const std::string no_ests = ShellQuote(
      dir_.Write("no_ests.toml", "[model]\nname = \"fmnist_cnn\"\n[train]\nglobal_batch = 64\n")
          .string());
  EXPECT_EQ(Run("--config " + no_ests + " --ranks 4").exit_code, 2);
  EXPECT_NE(err().find("give that E with --ests"), std::string::npos) << err();
  EXPECT_EQ(Run("--config " + no_ests + " --ranks 4 --ests 8").exit_code, 0) << err();
  // A model without a performance model: no estimate, and how to get one.
  const std::string gpt = ShellQuote(
      dir_.Write("gpt.toml", "[model]\nname = \"gpt\"\n[train]\nests = 4\nglobal_batch = 32\n")
          .string());
  EXPECT_EQ(Run("--config " + gpt + " --ranks 1").exit_code, 2);
  EXPECT_NE(err().find("expected train.perf_model"), std::string::npos) << err();
}

}  // namespace
}  // namespace elastic::agent
