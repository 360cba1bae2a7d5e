// elastic-agent's command line: `elastic-agent [--help|--version] <command> [<args>]`, parsed
// with Boost.Program_options into a value main() dispatches on. No I/O, no LibTorch.
// Errors: throws UsageError with a one-line message that ends in a pointer to --help.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace elastic::agent {

// --help or --version: print `text` to stdout and exit 0.
struct ShowText {
  std::string text;
};

// `train --config F [--until-step S]`.
struct TrainArgs {
  std::string config_path;
  std::optional<std::int64_t> until_step;
};

// `eval --config F [--save-logits OUT]`.
struct EvalArgs {
  std::string config_path;
  std::string save_logits;  // "" = none; else the test logits as one torch.load-able tensor
};

// `export --config F --out OUT`: the newest checkpoint's parameters and buffers written into
// the job's TorchScript module (model.torchscript).
struct ExportArgs {
  std::string config_path;
  std::string out;
};

// `run --config F [--socket S] [--max-restarts N]`: the supervisor inside a batch script.
struct RunArgs {
  std::string config_path;
  std::string socket;  // empty: $SLURM_ELASTIC_ELASTICD_SOCKET, else elasticd's default
  int max_restarts = 2;  // failed steps relaunched from the newest checkpoint, per job
};

// `profile --config F [--out DIR]`: run the sampled configurations of profile file F and write
// DIR/points.json, DIR/points.csv and DIR/points.plain.json (agent/profile/profile_command.h).
struct ProfileArgs {
  std::string config_path;
  std::string out_dir = ".";
};

// `profile-bandwidth --bytes N --reps R`: the rank-to-rank bandwidth measurement that `profile`
// starts under `mpirun -np 2` (internal; not in the program's --help).
struct ProfileBandwidthArgs {
  std::int64_t bytes = 0;
  int reps = 0;
};

using Command =
    std::variant<ShowText, TrainArgs, EvalArgs, ExportArgs, RunArgs, ProfileArgs,
                 ProfileBandwidthArgs>;

// `args` are argv[1..]. A global option before the command applies to the program, after it to
// the command (`elastic-agent train --help` shows train's help).
Command ParseCommandLine(const std::vector<std::string>& args);

// The project version CMake passes in (PROJECT_VERSION).
std::string_view AgentVersion();

}  // namespace elastic::agent
