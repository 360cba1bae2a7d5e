// elastic-agent entry point: parse the command line, run the command, map errors to exit codes
// (2: usage or configuration, incompatible checkpoint; 1: runtime failure). No exception leaves
// main.
#include <iostream>
#include <string>
#include <variant>
#include <vector>

#include "agent/cli/command_line.h"
#include "agent/common/env.h"
#include "agent/common/errors.h"
#include "agent/config/job_config.h"
#include "agent/train/checkpoint_signals.h"
#include "agent/train/train_command.h"
#include "scheduler/common/toml_reader.h"

namespace {

using namespace elastic::agent;

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

// LibTorch's messages carry a multi-line backtrace; the error contract is one line.
int Fail(const std::exception& error, int status) {
  std::string what = error.what();
  std::cerr << "elastic-agent: " << what.substr(0, what.find('\n')) << std::endl;
  return status;
}

int RunTrain(const TrainArgs& args) {
  EnvLookup env = ProcessEnv();
  JobConfig config = LoadJobConfig(args.config_path, env);
  InstallCheckpointSignalHandlers();
  RunTrainCommand(config, TrainOptions{args.until_step, IsPrimaryRank(env)}, std::cout,
                  std::cerr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Command command = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
    if (const auto* text = std::get_if<ShowText>(&command)) {
      std::cout << text->text;
      return 0;
    }
    return RunTrain(std::get<TrainArgs>(command));
  } catch (const UsageError& e) {
    return Fail(e, kExitUsage);
  } catch (const elastic::ConfigError& e) {
    return Fail(e, kExitUsage);
  } catch (const std::exception& e) {
    return Fail(e, kExitRuntime);
  } catch (...) {
    std::cerr << "elastic-agent: unknown error" << std::endl;
    return kExitRuntime;
  }
}
