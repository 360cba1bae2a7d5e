// Running the real elastic-agent under mpirun in integration tests, and reading its results.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {

// The built elastic-agent binary.
std::string AgentPath();

// A Fashion-MNIST CNN job for the agent tests (lr 0.05, momentum 0.9, one intra-op thread).
struct FmnistJob {
  int ests = 1;  // 0: no train.ests line (`elastic-agent run` then picks the default)
  int global_batch = 64;
  int seed = 1;
  int steps = 1;
  std::string determinism;  // "" = the default
  std::string plan;         // "" = the default
  int log_every = 0;
  std::string extra_train;       // more [train] lines
  std::string checkpoint_dir;    // "" = no [checkpoint] table
  std::string extra_checkpoint;  // more [checkpoint] lines (with checkpoint_dir)
};
std::string FmnistJobText(const FmnistJob& job);

// Writes `dir`/NAME.toml: the Fashion-MNIST CNN with E = `ests`, a global batch of 64 (lr 0.05,
// momentum 0.9, one intra-op thread, a progress line every 500 steps), `seed` and `steps`, more
// [train] lines in `extra_train`, checkpoints in `dir`/NAME plus `extra_checkpoint` lines.
// Returns the file's path. Two configs that differ only in NAME train to the same parameters.
std::string WriteFmnistJobConfig(const TempDir& dir, const std::string& name, int ests, int seed,
                                 int steps, const std::string& extra_train = "",
                                 const std::string& extra_checkpoint = "");

// `mpirun --oversubscribe -np ranks elastic-agent train --config F<extra>`, allowed as root;
// with `timeout_s` > 0 wrapped in timeout(1) so a hung run ends with status 124.
std::string MpirunAgentCommand(int ranks, const std::filesystem::path& config,
                               const std::string& extra = "", int timeout_s = 0);

// The params_sha256 of the contract line; fails the test (and returns "") without one or when
// the run did not exit 0.
std::string FinalHash(const CommandResult& run);

// The params_sha256 of the last contract line in a job's output (the supervisor's job prints one
// per step that ran), or "" without one.
std::string LastParamsHash(const std::string& output);

// The params_sha256 of `elastic-agent train --config F` in one process: the uninterrupted run a
// resized job's bits are compared with; "" when it printed none.
std::string OneProcessParamsHash(const std::string& config);

// The lines of `text` that contain a match of the regex `pattern`, in order.
std::vector<std::string> MatchingLines(const std::string& text, const std::string& pattern);

// Polls the file at `path` (a job's output) until one of its lines matches `pattern`; whether one
// did within `timeout_s`.
bool WaitForOutput(const std::string& path, const std::string& pattern, int timeout_s);

// The pid of rank `rank` of an agent run with `config`, found through /proc (0 if none).
pid_t FindAgentRank(const std::filesystem::path& config, int rank);

}  // namespace elastic::testing
