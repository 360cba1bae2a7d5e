// Tests that the elastic-agent binary maps outcomes to exit codes and one-line stderr messages:
// 0 for help/version, 2 for usage and config errors, 1 for runtime (data) failures.
#include <gtest/gtest.h>

#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::agent {
namespace {

using elastic::testing::RunCommand;
using elastic::testing::ShellQuote;

std::string Agent() { return ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent"); }

TEST(ElasticAgentBinary, HelpAndVersionExitZero) {
  auto version = RunCommand(Agent() + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output.rfind("elastic-agent ", 0), 0u);
  EXPECT_EQ(RunCommand(Agent() + " train --help").exit_code, 0);
}

TEST(ElasticAgentBinary, UsageAndConfigErrorsExitTwo) {
  auto missing = RunCommand(Agent() + " train");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.output,
            "elastic-agent: train: the option '--config' is required but missing (see "
            "elastic-agent train --help)\n");
  elastic::testing::TempDir dir;
  auto config = dir.Write("job.toml", "[train]\nthreads = 0\n");
  auto bad = RunCommand(Agent() + " train --config " + ShellQuote(config.string()));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.output, "elastic-agent: " + config.string() +
                            ":2: train.threads: invalid value 0: expected an integer from 1 to "
                            "256\n");
}

TEST(ElasticAgentBinary, CorruptDataExitsOneWithOneLine) {
  elastic::testing::TempDir dir;
  dir.Write("data/train-images-idx3-ubyte", "not an idx file");
  dir.Write("data/train-labels-idx1-ubyte", "");
  auto config = dir.Write("job.toml", "[data]\npath = \"data\"\n");
  auto result = RunCommand(Agent() + " train --config " + ShellQuote(config.string()));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.output,
            "elastic-agent: " + (dir.path() / "data/train-images-idx3-ubyte").string() +
                ": bad IDX magic 0x6e6f7420: expected 0x00000803 (unsigned bytes, "
                "3 dimensions)\n");
}

}  // namespace
}  // namespace elastic::agent
