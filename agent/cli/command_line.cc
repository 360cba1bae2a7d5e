// ParseCommandLine: split at the command name, then one options_description per level.
#include "agent/cli/command_line.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <sstream>

#include "agent/common/errors.h"

#ifndef ELASTIC_AGENT_VERSION
#error "ELASTIC_AGENT_VERSION must be defined by the build (PROJECT_VERSION)"
#endif

namespace elastic::agent {
namespace {

namespace po = boost::program_options;

constexpr unsigned kHelpWidth = 100;
constexpr std::string_view kProgramUsage =
    "Usage: elastic-agent [--help] [--version] <command> [<args>]\n"
    "\n"
    "Elastic data-parallel training under Slurm (slurm-elastic).\n"
    "\n"
    "Commands:\n"
    "  train    train the configured model (see elastic-agent train --help)\n"
    "  eval     test-set accuracy of the newest checkpoint (see elastic-agent eval --help)\n"
    "  export   the newest checkpoint into your TorchScript module (see elastic-agent export\n"
    "           --help)\n"
    "  run      supervise an elastic job from its batch script (see elastic-agent run --help)\n"
    "  profile  measure sampled configurations for the performance model's fitter (see\n"
    "           elastic-agent profile --help)\n"
    "  profile-layers  time each layer's forward + backward for DeepPool's burst planner (see\n"
    "           elastic-agent profile-layers --help)\n";
constexpr std::string_view kRunUsage =
    "Usage: elastic-agent run --config FILE [--socket PATH] [--max-restarts N]\n"
    "\n"
    "The supervisor of an elastic job; call it from the batch script of `sbatch --elastic`.\n"
    "It registers the job with elasticd, runs `srun elastic-agent train --config FILE` on the\n"
    "job's nodes and, when elasticd orders a resize, stops the step at a mini-batch boundary\n"
    "(on-demand checkpoint), shrinks or grows the allocation and relaunches on the new nodes.\n"
    "A step that fails (a rank killed, a node lost) is relaunched from the newest checkpoint,\n"
    "up to --max-restarts times per job.\n"
    "Exit status: 0 when training completed, else the failing step's status.\n";
constexpr std::string_view kTrainUsage =
    "Usage: elastic-agent train --config FILE [--until-step S]\n"
    "\n"
    "Trains the model of the job config FILE on the ESTs of this job. On rank 0, prints progress\n"
    "and last `elastic-agent: step=<N> loss=<float> params_sha256=<64 hex>`.\n"
    "\n"
    "Checkpoints (only with checkpoint.dir set in FILE; without it nothing is written and every\n"
    "run starts at step 0): resumes from the newest valid checkpoint there, skipping corrupt ones\n"
    "with a warning and refusing one written for another model or config (exit 2). Rank 0 writes\n"
    "one every checkpoint.every_steps steps, at the stop step, on SIGUSR1 (training goes on) and\n"
    "on SIGTERM (after the current step, then exits 0); the two newest are kept.\n";

constexpr std::string_view kEvalUsage =
    "Usage: elastic-agent eval --config FILE [--save-logits OUT]\n"
    "\n"
    "Classifies the test split (Fashion-MNIST's t10k files, or the test*.pt shards of\n"
    "data.format = \"tensors\", in name order) with the parameters and buffers of the newest\n"
    "valid checkpoint in checkpoint.dir (corrupt newer ones are skipped with a warning; no\n"
    "checkpoint is an error), in eval mode, and prints the accuracy, overall and per class:\n"
    "`elastic-agent: eval checkpoint=<path> step=<N> accuracy=<0..1> correct=<n> total=<n>`, then\n"
    "one `class=<label> [name=\"<name>\"] accuracy=... correct=... total=...` line per class\n"
    "(a token model: per target token, classes that occur). Deterministic: the same checkpoint\n"
    "and config always print the same numbers.\n";

constexpr std::string_view kExportUsage =
    "Usage: elastic-agent export --config FILE --out OUT\n"
    "\n"
    "Writes the parameters and buffers of the newest valid checkpoint in checkpoint.dir (the\n"
    "buffers of EST 0) into the job's TorchScript module (model.torchscript) and saves it as OUT,\n"
    "in eval mode, for Python's torch.jit.load: the same logits as `elastic-agent eval` on the\n"
    "same batch. OUT is written atomically; an existing OUT is replaced.\n";

constexpr std::string_view kProfileUsage =
    "Usage: elastic-agent profile --config FILE [--out DIR]\n"
    "\n"
    "Runs every sampled configuration ([[run]]: workers, plan, threads, ga_steps/micro_batches,\n"
    "cpu_threads) of the profile FILE for real, as `mpirun -np W elastic-agent train`, and\n"
    "records its steady-state throughput (median samples/s over measured_steps after\n"
    "warmup_steps; with host_probe, the default, each step is first scaled to the host's quiet\n"
    "speed by a probe timed before it). Also measures the model's forward time per sample (one\n"
    "worker, per thread count), the bandwidth between two ranks and the host copy bandwidth.\n"
    "Writes DIR/points.json (the input of `elastic-plan fit`), DIR/points.csv, with host_probe\n"
    "DIR/points.plain.json (the unscaled medians), and each run's job file and output under\n"
    "DIR/runs/. Format: docs/perf-model.md, \"Profiling and fitting\".\n";

std::string Describe(std::string_view usage, const po::options_description& options) {
  std::ostringstream text;
  text << usage << "\n" << options;
  return text.str();
}

// `command` is "" for the program's own options, else the command name (for messages).
po::variables_map Parse(const std::vector<std::string>& args,
                        const po::options_description& options, const std::string& command) {
  po::variables_map values;
  try {
    // No positional arguments are accepted: without an (empty) positional description Boost
    // would silently drop a stray word such as a forgotten `--config`.
    const po::positional_options_description no_positionals;
    po::store(po::command_line_parser(args).options(options).positional(no_positionals).run(),
              values);
    if (values.count("help") == 0) po::notify(values);  // --help must work without --config
  } catch (const po::error& e) {
    const std::string prefix = command.empty() ? "" : command + ": ";
    const std::string help = command.empty() ? "--help" : command + " --help";
    throw UsageError(prefix + e.what() + " (see elastic-agent " + help + ")");
  }
  return values;
}

std::int64_t ParseUntilStep(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == text.npos;
  if (!digits_only || ec != std::errc() || ptr != end || value < 1) {
    throw UsageError("train: --until-step: invalid value \"" + text +
                     "\": expected an integer >= 1 (see elastic-agent train --help)");
  }
  return value;
}

Command ParseTrain(const std::vector<std::string>& args) {
  po::options_description options("Options", kHelpWidth);
  options.add_options()("help,h", "show this help and exit")(
      "config,c", po::value<std::string>()->required()->value_name("FILE"),
      "job config (TOML): model, data, train and checkpoint settings")(
      "until-step", po::value<std::string>()->value_name("S"),
      "stop after step S (at most train.steps), with a checkpoint if checkpoint.dir is set");
  po::variables_map values = Parse(args, options, "train");
  if (values.count("help") != 0) return ShowText{Describe(kTrainUsage, options)};
  TrainArgs train{values["config"].as<std::string>(), std::nullopt};
  if (values.count("until-step") != 0) {
    train.until_step = ParseUntilStep(values["until-step"].as<std::string>());
  }
  return train;
}

Command ParseEval(const std::vector<std::string>& args) {
  po::options_description options("Options", kHelpWidth);
  options.add_options()("help,h", "show this help and exit")(
      "config,c", po::value<std::string>()->required()->value_name("FILE"),
      "job config (TOML): the model, data.path and checkpoint.dir of the job")(
      "save-logits", po::value<std::string>()->value_name("OUT"),
      "also write every test sample's logits, in test order, as one tensor (torch.load)");
  po::variables_map values = Parse(args, options, "eval");
  if (values.count("help") != 0) return ShowText{Describe(kEvalUsage, options)};
  EvalArgs eval{values["config"].as<std::string>(), ""};
  if (values.count("save-logits") != 0) eval.save_logits = values["save-logits"].as<std::string>();
  return eval;
}

Command ParseExport(const std::vector<std::string>& args) {
  po::options_description options("Options", kHelpWidth);
  options.add_options()("help,h", "show this help and exit")(
      "config,c", po::value<std::string>()->required()->value_name("FILE"),
      "job config (TOML) with model.torchscript and checkpoint.dir")(
      "out,o", po::value<std::string>()->required()->value_name("OUT"),
      "the TorchScript file to write");
  po::variables_map values = Parse(args, options, "export");
  if (values.count("help") != 0) return ShowText{Describe(kExportUsage, options)};
  return ExportArgs{values["config"].as<std::string>(), values["out"].as<std::string>()};
}

Command ParseRun(const std::vector<std::string>& args) {
  po::options_description options("Options", kHelpWidth);
  options.add_options()("help,h", "show this help and exit")(
      "config,c", po::value<std::string>()->required()->value_name("FILE"),
      "job config (TOML), handed to every `elastic-agent train` step")(
      "socket", po::value<std::string>()->value_name("PATH"),
      "elasticd's socket (default: $SLURM_ELASTIC_ELASTICD_SOCKET from the plugin, else "
      "/run/elasticd/elasticd.sock)")(
      "max-restarts", po::value<int>()->default_value(2)->value_name("N"),
      "relaunch a failed step from the newest checkpoint at most N times (0-100)");
  po::variables_map values = Parse(args, options, "run");
  if (values.count("help") != 0) return ShowText{Describe(kRunUsage, options)};
  const int max_restarts = values["max-restarts"].as<int>();
  if (max_restarts < 0 || max_restarts > 100) {
    throw UsageError("--max-restarts " + std::to_string(max_restarts) +
                     ": expected an integer from 0 to 100");
  }
  return RunArgs{values["config"].as<std::string>(),
                 values.count("socket") ? values["socket"].as<std::string>() : "", max_restarts};
}

Command ParseProfile(const std::vector<std::string>& args) {
  po::options_description options("Options", kHelpWidth);
  options.add_options()("help,h", "show this help and exit")(
      "config,c", po::value<std::string>()->required()->value_name("FILE"),
      "profile file (TOML): the job config to profile and the [[run]] configurations")(
      "out,o", po::value<std::string>()->default_value(".")->value_name("DIR"),
      "directory for points.json, points.csv and runs/ (created if missing)");
  po::variables_map values = Parse(args, options, "profile");
  if (values.count("help") != 0) return ShowText{Describe(kProfileUsage, options)};
  const std::string out = values["out"].as<std::string>();
  if (out.empty()) {
    throw UsageError("profile: --out: invalid value \"\": expected a directory "
                     "(see elastic-agent profile --help)");
  }
  return ProfileArgs{values["config"].as<std::string>(), out};
}

Command ParseProfileBandwidth(const std::vector<std::string>& args) {
  po::options_description options("Options", kHelpWidth);
  options.add_options()("help,h", "show this help and exit")(
      "bytes", po::value<std::int64_t>()->required()->value_name("N"), "message size")(
      "reps", po::value<int>()->required()->value_name("R"), "measured ping-pongs");
  po::variables_map values = Parse(args, options, "profile-bandwidth");
  if (values.count("help") != 0) {
    return ShowText{Describe("Usage: elastic-agent profile-bandwidth --bytes N --reps R\n"
                             "(started by elastic-agent profile under mpirun -np 2)\n",
                             options)};
  }
  ProfileBandwidthArgs parsed{values["bytes"].as<std::int64_t>(), values["reps"].as<int>()};
  if (parsed.bytes < 1 || parsed.bytes > (std::int64_t{1} << 32) || parsed.reps < 1 ||
      parsed.reps > 100000) {
    throw UsageError("profile-bandwidth: expected --bytes from 1 to 2^32 and --reps from 1 to "
                     "100000");
  }
  return parsed;
}

}  // namespace

std::string_view AgentVersion() { return ELASTIC_AGENT_VERSION; }

Command ParseCommandLine(const std::vector<std::string>& args) {
  auto command = std::find_if(args.begin(), args.end(),
                              [](const std::string& arg) { return !arg.starts_with("-"); });
  po::options_description options("Options", kHelpWidth);
  options.add_options()("help,h", "show this help and exit")("version",
                                                             "show the version and exit");
  po::variables_map values = Parse({args.begin(), command}, options, "");
  if (values.count("help") != 0) return ShowText{Describe(kProgramUsage, options)};
  if (values.count("version") != 0) {
    return ShowText{"elastic-agent " + std::string(AgentVersion()) + "\n"};
  }
  if (command == args.end()) throw UsageError("missing command (see elastic-agent --help)");
  if (*command == "train") return ParseTrain({command + 1, args.end()});
  if (*command == "eval") return ParseEval({command + 1, args.end()});
  if (*command == "export") return ParseExport({command + 1, args.end()});
  if (*command == "run") return ParseRun({command + 1, args.end()});
  if (*command == "profile") return ParseProfile({command + 1, args.end()});
  if (*command == "profile-bandwidth") return ParseProfileBandwidth({command + 1, args.end()});
  throw UsageError("unknown command \"" + *command +
                   "\": expected train, eval, export, run or profile (see elastic-agent --help)");
}

}  // namespace elastic::agent
