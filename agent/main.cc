// elastic-agent entry point: parse the command line, run the command, map errors to exit codes
// (2: usage or configuration, incompatible checkpoint; 1: runtime failure). No exception leaves
// main. Under mpirun/srun every rank runs this; an error on any rank of a multi-rank world ends
// the whole world (Communicator::Abort), since its peers may wait in a collective.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "agent/cli/command_line.h"
#include "agent/comm/communicator.h"
#include "common/env.h"
#include "agent/common/errors.h"
#include "agent/config/job_config.h"
#include "agent/data/dataset_checks.h"
#include "agent/eval/eval_command.h"
#include "agent/eval/export_command.h"
#include "agent/profile/layer_profile_args.h"
#include "agent/profile/profile_command.h"
#include "agent/supervisor/allocation.h"
#include "agent/supervisor/supervisor.h"
#include "agent/train/checkpoint_signals.h"
#include "agent/train/train_command.h"
#include "common/toml_reader.h"

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

// D2 pins the CPU kernel ISA of LibTorch's own kernels. LibTorch reads ATEN_CPU_CAPABILITY once,
// on the first kernel dispatch, so this must run before any LibTorch call; the start line's
// isa= shows what took effect (docs/consistency.md).
void PinCpuKernelIsa(const JobConfig& config) {
  if (config.train.determinism != elastic::Determinism::kD2) return;
  if (setenv("ATEN_CPU_CAPABILITY", "default", /*overwrite=*/1) != 0) {
    throw std::runtime_error("determinism d2: cannot set ATEN_CPU_CAPABILITY");
  }
}

int RunTrain(const TrainArgs& args, std::unique_ptr<Communicator>& world, int* argc,
             char*** argv) {
  EnvLookup env = ProcessEnv();
  JobConfig config = LoadJobConfig(args.config_path, env, CheckTrainingData);
  PinCpuKernelIsa(config);
  // Before MPI start-up, which takes seconds on a loaded node: a SIGTERM/SIGUSR2 meanwhile (a
  // cancel, a resize order) is then recorded and honoured at the first step instead of killing
  // the rank; and again after it, in case the MPI library installed handlers of its own.
  InstallCheckpointSignalHandlers();
  world = MakeWorldCommunicator(argc, argv);
  InstallCheckpointSignalHandlers();
  // With MPI the world rank decides who prints and writes; alone, the launcher's variables.
  const bool primary = world->size() > 1 ? world->rank() == 0 : IsPrimaryRank(env);
  RunTrainCommand(config, TrainOptions{args.until_step, primary}, *world, std::cout, std::cerr);
  return 0;
}

// Eval runs in one process, without MPI: it reads a checkpoint and the test split.
int RunEval(const EvalArgs& args) {
  JobConfig config = LoadJobConfig(args.config_path, ProcessEnv(), CheckTrainingData);
  PinCpuKernelIsa(config);
  std::cout << FormatEvalReport(RunEvalCommand(config, std::cerr, args.save_logits))
            << std::flush;
  return 0;
}

// Export runs in one process, without MPI: it reads a checkpoint and writes the module.
int RunExport(const ExportArgs& args) {
  JobConfig config = LoadJobConfig(args.config_path, ProcessEnv());
  PinCpuKernelIsa(config);
  std::cout << RunExportCommand(config, args.out, std::cerr) << std::flush;
  return 0;
}

// Ranks per node, and the EST count when the job names none (--elastic-est's help: MAX nodes x
// ranks per node), handed to every step through SLURM_ELASTIC_EST so that all generations agree.
void ChooseJobShape(const JobConfig& config, const EnvLookup& env, SupervisorOptions& options) {
  options.ranks_per_node = RanksPerNodeFromEnv(env);
  int max_nodes = 1;
  if (config.train.ests_origin.empty()) {
    if (auto id = env("SLURM_JOB_ID")) {
      max_nodes = JobMaxNodes(static_cast<std::uint32_t>(std::stoul(*id)));
    }
  }
  EstCount ests = JobEstCount(config.train.ests, config.train.ests_origin,
                              config.train.global_batch, max_nodes, options.ranks_per_node);
  if (ests.defaulted) ::setenv("SLURM_ELASTIC_EST", std::to_string(ests.ests).c_str(), 1);
  options.ests = static_cast<int>(ests.ests);
  options.ests_origin = ests.origin;
}

// The supervisor runs once per job, in the batch script, without MPI and without LibTorch work.
int RunRun(const RunArgs& args) {
  EnvLookup env = ProcessEnv();
  JobConfig config = LoadJobConfig(args.config_path, env, CheckTrainingData);  // refuses a bad config up front
  SupervisorOptions options;
  options.config_path = std::filesystem::absolute(args.config_path).string();
  options.agent_path = std::filesystem::read_symlink("/proc/self/exe").string();
  options.elasticd_socket = args.socket;
  if (options.elasticd_socket.empty()) {
    options.elasticd_socket = env("SLURM_ELASTIC_ELASTICD_SOCKET").value_or(
        "/run/elasticd/elasticd.sock");
  }
  options.munge_socket = env("SLURM_ELASTIC_MUNGE_SOCKET").value_or(SlurmMungeSocket());
  ChooseJobShape(config, env, options);
  options.plan = std::string(elastic::ToString(config.train.plan));
  options.sla_class = env("SLURM_ELASTIC_CLASS").value_or("best-effort");
  options.max_restarts = args.max_restarts;
  return RunSupervisor(options, std::cout, std::cerr);
}

// The profiler runs in one process without MPI; the runs it starts are mpirun worlds of their own.
int RunProfile(const ProfileArgs& args) {
  ProfileOptions options;
  options.config_path = args.config_path;
  options.out_dir = args.out_dir;
  options.agent_path = std::filesystem::read_symlink("/proc/self/exe").string();
  RunProfileCommand(options, std::cout);
  return 0;
}

// `profile-layers`: one process, no MPI; parsed beside the command (agent/profile/).
int RunProfileLayers(const std::vector<std::string>& args) {
  auto parsed = ParseLayerProfileArgs(args);
  if (const auto* text = std::get_if<ShowText>(&parsed)) {
    std::cout << text->text;
    return 0;
  }
  RunLayerProfileCommand(std::get<LayerProfileOptions>(parsed), std::cout);
  return 0;
}

// Started by `profile` under mpirun -np 2: every rank takes part in the ping-pong.
int RunProfileBandwidthRank(const ProfileBandwidthArgs& args,
                            std::unique_ptr<Communicator>& world, int* argc, char*** argv) {
  world = MakeWorldCommunicator(argc, argv);
  RunProfileBandwidth(*world, static_cast<std::size_t>(args.bytes), args.reps, std::cout);
  return 0;
}

// A failing rank of a multi-rank world takes the others down instead of leaving them blocked.
int EndRank(int status, const std::unique_ptr<Communicator>& world) {
  if (status != 0 && world && world->size() > 1) world->Abort(status);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<Communicator> world;
  try {
    if (argc >= 2 && std::string(argv[1]) == "profile-layers") {
      return RunProfileLayers(std::vector<std::string>(argv + 2, argv + argc));
    }
    Command command = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
    if (const auto* text = std::get_if<ShowText>(&command)) {
      std::cout << text->text;
      return 0;
    }
    if (const auto* eval = std::get_if<EvalArgs>(&command)) return RunEval(*eval);
    if (const auto* out = std::get_if<ExportArgs>(&command)) return RunExport(*out);
    if (const auto* run = std::get_if<RunArgs>(&command)) return RunRun(*run);
    if (const auto* profile = std::get_if<ProfileArgs>(&command)) return RunProfile(*profile);
    if (const auto* bandwidth = std::get_if<ProfileBandwidthArgs>(&command)) {
      return RunProfileBandwidthRank(*bandwidth, world, &argc, &argv);
    }
    return RunTrain(std::get<TrainArgs>(command), world, &argc, &argv);
  } catch (const UsageError& e) {
    return EndRank(Fail(e, kExitUsage), world);
  } catch (const elastic::ConfigError& e) {
    return EndRank(Fail(e, kExitUsage), world);
  } catch (const std::exception& e) {
    return EndRank(Fail(e, kExitRuntime), world);
  } catch (...) {
    std::cerr << "elastic-agent: unknown error" << std::endl;
    return EndRank(kExitRuntime, world);
  }
}
