// elastic-plan burst: exit codes and messages of the command line (the binary, run as a user
// would).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::burst {
namespace {

using elastic::testing::RunCommand;
using elastic::testing::ShellQuote;

const std::string kPlan = ELASTIC_BINARY_DIR "/tools/elastic-plan";

const char* kProfile = R"({"format": "elastic-burst-profile/1", "model": "toy", "global_batch": 4,
  "network": {"bandwidth_gbps": 8, "latency_us": 1000},
  "layers": [
    {"name": "c1", "param_bytes": 0, "output_bytes_per_sample": 1e6, "fwd_bwd_ms": [[1,2],[4,8]]},
    {"name": "c2", "param_bytes": 0, "output_bytes_per_sample": 1e6, "fwd_bwd_ms": [[1,2],[4,8]]},
    {"name": "fc", "param_bytes": 8e6, "output_bytes_per_sample": 4000,
     "fwd_bwd_ms": [[1,1],[2,1.5],[4,2]]}]})";

class BurstCli : public ::testing::Test {
 protected:
  std::string Run(const std::string& args, int expected_exit) {
    elastic::testing::CommandResult result = RunCommand(ShellQuote(kPlan) + " " + args);
    EXPECT_EQ(result.exit_code, expected_exit) << args << "\n" << result.output;
    return result.output;
  }
  elastic::testing::TempDir dir_;
  std::string profile_ = ShellQuote(dir_.Write("p.json", kProfile).string());
};

TEST_F(BurstCli, PrintsThePlanBesideTheUniformOne) {
  std::string out = Run("burst --profile " + profile_ + " --gpus 4 --amp-limit 5", 0);
  EXPECT_NE(out.find("burst    iteration 14.000 ms"), std::string::npos) << out;
  EXPECT_NE(out.find("uniform  iteration 18.000 ms"), std::string::npos) << out;
}

TEST_F(BurstCli, JsonOutput) {
  std::string out =
      Run("burst --profile " + profile_ + " --gpus 4 --amp-limit inf --all-counts --json", 0);
  nlohmann::json plan = nlohmann::json::parse(out);
  EXPECT_NEAR(plan["iteration_ms"].get<double>(), 14.0, 1e-9);
  EXPECT_TRUE(plan["amp_limit"].is_null());
  EXPECT_EQ(plan["counts"], "all");
  EXPECT_EQ(plan["layers"][2]["gpus"], 1);
  EXPECT_EQ(plan["uniform"]["gpus"], 1);
}

TEST_F(BurstCli, BadArgumentsExitNonZeroWithAReason) {
  EXPECT_NE(Run("", 2).find("elastic-plan: missing command: expected \"burst\""),
            std::string::npos);
  EXPECT_NE(Run("simulate", 2).find("unknown command \"simulate\""), std::string::npos);
  EXPECT_NE(Run("burst --profile " + profile_ + " --amp-limit 2", 2)
                .find("the option '--gpus' is required but missing"),
            std::string::npos);
  EXPECT_NE(Run("burst --profile " + profile_ + " --gpus 4 --amp-limit 2 --global-batch 0", 2)
                .find("--global-batch: invalid value 0: expected an integer >= 1"),
            std::string::npos);
  EXPECT_NE(Run("burst --profile " + profile_ + " --gpus 4 --amp-limit 0.5", 2)
                .find("elastic-plan burst: --amp-limit: invalid value 0.5: expected a number >= 1"),
            std::string::npos);
  EXPECT_NE(Run("burst --profile " + profile_ + " --gpus 0 --amp-limit 2", 2)
                .find("elastic-plan burst: --gpus: invalid value 0: expected an integer >= 1"),
            std::string::npos);
  EXPECT_NE(Run("burst --profile /nonexistent.json --gpus 4 --amp-limit 2", 2)
                .find("/nonexistent.json: cannot open the profile"),
            std::string::npos);
  std::string bad = ShellQuote(dir_.Write("bad.json", "{\"format\": 1}").string());
  EXPECT_NE(Run("burst --profile " + bad + " --gpus 4 --amp-limit 2", 2).find("$: missing key"),
            std::string::npos);
}

}  // namespace
}  // namespace elastic::burst
