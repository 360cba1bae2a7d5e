// RunProfileCommand: validate every run, measure forward time and bandwidths, run each
// configuration under mpirun, write points.json and points.csv.
#include "agent/profile/profile_command.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <regex>
#include <thread>

#include "agent/common/errors.h"
#include "agent/common/median.h"
#include "agent/config/job_config.h"
#include "agent/data/dataset_checks.h"
#include "agent/plan/execution_plan.h"
#include "agent/profile/child_process.h"
#include "agent/profile/measure.h"
#include "agent/profile/points_csv.h"
#include "agent/profile/profile_config.h"
#include "agent/profile/profile_runs.h"
#include "agent/profile/round_estimates.h"
#include "agent/profile/run_description.h"
#include "agent/profile/split_shares.h"
#include "common/atomic_file.h"
#include "common/toml_reader.h"
#include "common/toml_text.h"
#include "perf/rubick/perf_model.h"
#include "perf/rubick/plan_selection.h"

namespace elastic::agent {
namespace {

namespace fs = std::filesystem;

// Forward passes timed per thread count, and ping-pongs / copies per bandwidth: enough for a
// stable median on a busy machine, a few seconds in all.
constexpr int kForwardWarmup = 5;
constexpr int kForwardReps = 41;
constexpr int kBandwidthReps = 41;

// Crash-safe through <path>.tmp; no exact mode: the profile's files are the user's ordinary
// output, so the umask decides (0666 under it), as for any file the user writes.
void WriteFile(const fs::path& path, const std::string& text) {
  try {
    WriteFileAtomically(path, text, {.mode = std::nullopt, .temp_name = TempName::kFixed});
  } catch (const FileError& e) {
    throw TrainingError(std::string("profile: ") + e.what());
  }
}

// The configuration itself must not come from SLURM_ELASTIC_* variables (RunChild removes them
// from the runs too): a profile measures exactly what its file says.
const EnvLookup kNoEnvironment = [](std::string_view) { return std::optional<std::string>(); };

std::string Tail(const std::string& output, size_t lines) {
  size_t at = output.size();
  for (size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) {
    at = output.rfind('\n', at - 1);
  }
  return at == std::string::npos ? output : output.substr(at + 1);
}

std::vector<std::string> MpirunArgv(const ProfileConfig& config, int ranks,
                                    std::vector<std::string> command) {
  // --bind-to none: Open MPI binds each rank to one core by default for small -np, which would
  // squeeze a rank's intra-op and offload threads onto that core.
  std::vector<std::string> argv = {config.mpirun, "--oversubscribe",    "--bind-to", "none",
                                   "-np",         std::to_string(ranks)};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// Writes the run's job file and resolves its plan the way the agent will; refuses a run the
// agent or the performance model cannot run as described.
PreparedRun PrepareRun(const ProfileConfig& config, const JobConfig& job,
                       const std::string& job_text, const perf::ModelDesc& model,
                       const ProfileRun& run, const fs::path& runs_dir) {
  PreparedRun prepared;
  prepared.run = run;
  prepared.threads = run.threads > 0 ? run.threads : static_cast<int>(job.train.threads);
  const std::int64_t ests = run.ests > 0 ? run.ests : job.train.ests;
  const std::string where = config.job_path + ": run \"" + run.label + "\": ";
  if (ests < run.workers) {
    throw ConfigError(where + std::to_string(run.workers) + " workers but " + std::to_string(ests) +
                      " ESTs: expected at most one rank per EST");
  }
  if (job.train.global_batch % ests != 0) {
    throw ConfigError(where + "train.global_batch = " + std::to_string(job.train.global_batch) +
                      " is not divisible by " + std::to_string(ests) + " ESTs");
  }
  // (pp splits the ESTs into micro-batches, tp runs every EST on every rank of its group)
  if (run.plan != Plan::kPp && run.plan != Plan::kTp && ests % run.workers != 0) {
    throw ConfigError(where + std::to_string(ests) + " ESTs on " + std::to_string(run.workers) +
                      " workers: expected a multiple of the workers, so that every rank "
                      "accumulates the same a = E/W micro-batches the model assumes (Rubick §4.1)");
  }
  prepared.ests = ests;
  RunSettings settings;
  settings.plan = std::string(ToString(run.plan));
  settings.ests = ests;
  settings.threads = prepared.threads;
  settings.cpu_threads = run.cpu_threads > 0 ? run.cpu_threads : job.train.cpu_threads;
  settings.steps = config.warmup_steps + config.measured_steps;
  settings.data_path = job.data.path;
  settings.torchscript = job.model.torchscript;
  settings.host_probe = config.host_probe;
  prepared.job_file = runs_dir / (run.label + ".toml");
  WriteFile(prepared.job_file, JobTomlForRun(job_text, config.job_path, settings));
  JobConfig resolved = LoadJobConfig(prepared.job_file.string(), kNoEnvironment, CheckTrainingData);
  prepared.plan = ResolveExecutionPlan(resolved, run.workers);
  perf::Resources resources = RunResources(prepared, 1, 1, 1, 0, std::nullopt, 0);
  std::string invalid = perf::CheckPlan(model, resources, prepared.plan);
  if (!invalid.empty()) {
    throw ConfigError(where + "the performance model cannot describe plan " +
                      perf::Describe(prepared.plan) + ": " + invalid);
  }
  return prepared;
}

double MeasureMachinePeerBandwidth(const ProfileConfig& config, const std::string& agent,
                                   std::size_t bytes) {
  ChildResult result =
      RunChild(MpirunArgv(config, 2,
                          {agent, "profile-bandwidth", "--bytes", std::to_string(bytes), "--reps",
                           std::to_string(kBandwidthReps)}));
  if (result.status != 0) {
    throw TrainingError("profile: the bandwidth measurement (mpirun -np 2) failed with status " +
                        std::to_string(result.status) + ":\n" + Tail(result.output, 15));
  }
  return ParseBandwidthLine(result.output);
}

// One round of `prepared`: its measured steps (samples/s, and the host probe's time). The log is
// runs/<label>.log, or runs/<label>.r<round>.log when there are several rounds.
std::vector<Probed> MeasureSteps(const ProfileConfig& config, const PreparedRun& prepared,
                                 const std::string& agent, const fs::path& runs_dir,
                                 std::int64_t round) {
  ChildResult result = RunChild(MpirunArgv(
      config, prepared.run.workers, {agent, "train", "--config", prepared.job_file.string()}));
  const std::string suffix = config.repeats > 1 ? ".r" + std::to_string(round + 1) : "";
  WriteFile(runs_dir / (prepared.run.label + suffix + ".log"), result.output);
  if (result.status != 0) {
    throw TrainingError("profile: run \"" + prepared.run.label + "\" (mpirun -np " +
                        std::to_string(prepared.run.workers) + ") failed with status " +
                        std::to_string(result.status) + "; its output ends:\n" +
                        Tail(result.output, 15));
  }
  std::vector<Probed> steps;
  for (const StepRate& step :
       MeasuredSteps(ParseStepRates(result.output), config.warmup_steps, config.measured_steps)) {
    if (config.host_probe && !(step.probe_ms > 0)) {
      throw TrainingError("profile: run \"" + prepared.run.label + "\": step " +
                          std::to_string(step.step) +
                          " has no positive probe_ms on its progress line (host_probe = true)");
    }
    steps.push_back({step.samples_per_s, step.probe_ms});
  }
  return steps;
}

// §4.1: the forward time is profiled on one worker; here per intra-op thread count, in every
// round beside the runs (round-robin), so both see the same drifts of the machine.
RoundMeasurements MeasureInRounds(const ProfileConfig& config, const JobConfig& job,
                                  const std::vector<PreparedRun>& prepared,
                                  const std::string& agent, const fs::path& runs_dir,
                                  std::ostream& out) {
  RoundMeasurements measured;
  for (const PreparedRun& run : prepared) {
    measured.labels.push_back(run.run.label);
    measured.threads.push_back(run.threads);
  }
  measured.steps.resize(prepared.size());
  for (const PreparedRun& run : prepared) measured.forward[run.threads];
  // The half-size passes split a pass's time into a fixed part and a part per sample.
  measured.forward_batch = job.est_batch();
  measured.forward_small_batch = job.est_batch() / 2;
  for (std::int64_t round = 0; round < config.repeats; ++round) {
    const std::string of_rounds =
        config.repeats > 1
            ? " (round " + std::to_string(round + 1) + "/" + std::to_string(config.repeats) + ")"
            : "";
    for (auto& [threads, rounds] : measured.forward) {
      const bool half_too = measured.forward_small_batch > 0;
      PassTimings passes = MeasurePasses(job, threads, half_too, kForwardWarmup,
                                                  kForwardReps, config.host_probe);
      out << "profile: forward " << Median(Values(passes.full)) * 1e6 << " us/sample with "
          << threads << " intra-op thread(s)";
      if (half_too) {
        out << ", " << Median(Values(passes.half)) * 1e6 << " at half the batch ("
            << measured.forward_small_batch << " samples); backward "
            << Median(Values(passes.full_backward)) * 1e6 << " and "
            << Median(Values(passes.half_backward)) * 1e6;
        measured.forward_small[threads].push_back(std::move(passes.half));
        measured.backward[threads].push_back(std::move(passes.full_backward));
        measured.backward_small[threads].push_back(std::move(passes.half_backward));
      }
      rounds.push_back(std::move(passes.full));
      out << of_rounds << std::endl;
    }
    for (size_t i = 0; i < prepared.size(); ++i) {
      measured.steps[i].push_back(MeasureSteps(config, prepared[i], agent, runs_dir, round));
      out << "profile: [" << i + 1 << "/" << prepared.size() << "] " << prepared[i].run.label << " "
          << perf::Describe(prepared[i].plan) << ": " << Median(Values(measured.steps[i].back()))
          << " samples/s" << of_rounds << std::endl;
    }
  }
  return measured;
}

}  // namespace

double ParseBandwidthLine(const std::string& output) {
  static const std::regex line(R"(elastic-agent: bandwidth bytes=\d+ bytes_per_s=([0-9.eE+-]+))");
  std::smatch match;
  if (!std::regex_search(output, match, line) || !(std::stod(match[1].str()) > 0)) {
    throw TrainingError("profile: no positive `elastic-agent: bandwidth` line in:\n" +
                        Tail(output, 15));
  }
  return std::stod(match[1].str());
}

void RunProfileBandwidth(Communicator& world, std::size_t bytes, int reps, std::ostream& out) {
  const double rate = MeasurePeerBandwidth(world, bytes, reps);
  if (world.rank() == 0) {
    // 17 significant digits: the value travels through text into points.json unrounded.
    out << "elastic-agent: bandwidth bytes=" << bytes << " bytes_per_s=" << std::setprecision(17)
        << rate << std::endl;
  }
}

namespace {

// B_pcie and B_intra (= B_inter on one machine), at the size that moves in a step: the model's
// fp32 gradients.
void MeasureBandwidths(const ProfileConfig& config, const JobConfig& job, const std::string& agent,
                       double params, perf::ProfiledPoints& points, std::ostream& out) {
  const auto gradient_bytes = static_cast<std::size_t>(params * kFloatBytes);
  // T_off's link: on a GPU the host-device copy, on CPU workers a copy between host buffers.
  const bool gpu = job.train.device == ComputeDevice::kCuda;
  points.b_pcie = gpu ? MeasureDeviceCopyBandwidth(job, gradient_bytes, kBandwidthReps)
                      : MeasureHostCopyBandwidth(gradient_bytes, kBandwidthReps);
  points.b_intra = MeasureMachinePeerBandwidth(config, agent, gradient_bytes);
  points.b_inter = points.b_intra;
  out << "profile: bandwidth between ranks " << points.b_intra / 1e9 << " GB/s, host copy "
      << points.b_pcie / 1e9 << " GB/s" << (gpu ? " to the GPU and back" : "") << " ("
      << gradient_bytes << " bytes)" << std::endl;
}

// The runs' rates and forward rates estimated (scaled to the quiet host with the host probe),
// written as points.json, points.csv and (with the probe) points.plain.json.
perf::ProfiledPoints EstimateAndWritePoints(perf::ProfiledPoints points,
                                            const ProfileConfig& config, const JobConfig& job,
                                            const std::vector<PreparedRun>& prepared,
                                            const RoundMeasurements& measured,
                                            const fs::path& out_dir, std::ostream& out) {
  const Estimates plain_estimates = PlainEstimates(measured);
  const perf::ProfiledPoints plain = WithEstimates(points, config, job, prepared, plain_estimates);
  Estimates estimates = plain_estimates;
  if (config.host_probe) {
    const HostScaling scaling = FitHostScaling(measured);
    PrintRoundNoise(measured, &scaling, out);
    // The plain medians beside the scaled ones, so a fit on each can be compared.
    WriteFile(out_dir / "points.plain.json", perf::ProfiledPointsToJson(plain));
    estimates = QuietHostEstimates(measured, scaling);
    points = WithEstimates(points, config, job, prepared, estimates);
  } else {
    if (config.repeats > 1) PrintRoundNoise(measured, nullptr, out);
    points = plain;
  }
  for (const auto& [threads, rate] : estimates.forward_rate) {
    out << "profile: forward pass with " << threads
        << " intra-op thread(s): " << estimates.forward_pass_s.at(threads) * 1e6 << " us fixed + "
        << 1e6 / rate << " us per sample" << std::endl;
    if (auto backward = estimates.backward.find(threads); backward != estimates.backward.end()) {
      out << "profile: backward pass with " << threads
          << " intra-op thread(s): " << backward->second.s_per_pass * 1e6 << " us fixed + "
          << backward->second.s_per_sample * 1e6 << " us per sample" << std::endl;
    }
  }
  WriteFile(out_dir / "points.json", perf::ProfiledPointsToJson(points));
  WriteFile(out_dir / "points.csv", ProfiledPointsToCsv(points));
  out << "profile: wrote " << (out_dir / "points.json").string() << " and points.csv"
      << (config.host_probe ? " (at the quiet host), points.plain.json (plain medians)" : "")
      << std::endl;
  return points;
}

}  // namespace

perf::ProfiledPoints RunProfileCommand(const ProfileOptions& options, std::ostream& out) {
  const fs::path config_path = fs::absolute(options.config_path);
  const ProfileConfig config = ParseProfileConfig(
      ReadConfigFile(config_path.string()), options.config_path, config_path.parent_path().string());
  const JobConfig job = LoadJobConfig(config.job_path, kNoEnvironment, CheckTrainingData);
  if (job.train.scaling != Scaling::kEst) {
    throw ConfigError(config.job_path +
                      ": train.scaling: \"linear\" changes the global batch "
                      "with the workers; a profile needs the fixed global batch Rubick's model "
                      "assumes (§3): expected \"est\"");
  }
  const std::string job_text = ReadConfigFile(config.job_path);
  const fs::path out_dir = fs::absolute(options.out_dir);
  const fs::path runs_dir = out_dir / "runs";
  fs::create_directories(runs_dir);

  const ModelFacts facts = InspectModel(job);
  perf::ProfiledPoints points;
  points.model_name = ModelLabel(job);
  points.model = DescribeModel(job, facts,
                               MeasureSplitShares(job, static_cast<int>(config.warmup_steps),
                                                  static_cast<int>(config.measured_steps)));
  std::vector<PreparedRun> prepared;
  for (const ProfileRun& run : config.runs) {
    prepared.push_back(PrepareRun(config, job, job_text, points.model, run, runs_dir));
  }
  out << "profile: " << ModelLabel(job) << ": " << facts.params << " parameters, " << facts.blocks
      << " blocks, global batch " << job.train.global_batch << ", " << prepared.size()
      << " runs of " << config.warmup_steps << " + " << config.measured_steps << " steps, "
      << config.repeats << " round(s)" << std::endl;
  out << "profile: split: tp unsplit share " << points.model.tp_unsplit_share << ", block shares";
  for (double share : points.model.block_shares) out << " " << share;
  out << std::endl;

  MeasureBandwidths(config, job, options.agent_path, facts.params, points, out);
  const RoundMeasurements measured =
      MeasureInRounds(config, job, prepared, options.agent_path, runs_dir, out);
  return EstimateAndWritePoints(std::move(points), config, job, prepared, measured, out_dir, out);
}

}  // namespace elastic::agent
