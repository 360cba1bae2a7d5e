// Loading, environment overrides and validation of the job config.
#include "agent/config/job_config.h"

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "agent/config/burst_plan_file.h"
#include "agent/config/model_catalog.h"
#include "agent/config/quoted.h"
#include "common/byte_size.h"
#include "common/toml_choice.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

constexpr std::int64_t kMaxGlobalBatch = 1 << 24;
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();
constexpr double kMaxLearningRate = 1e6;

// Names of the environment variables that supplied a value, for error messages ("" = the file).
struct Origins {
  std::string ests;
  std::string plan;
  std::string determinism;
};

std::string FromEnv(const std::string& variable) {
  return variable.empty() ? "" : " (from " + variable + ")";
}

std::string ResolvePath(const std::string& path, const std::string& base_dir) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

// A key whose value is one of two words (data.augment, train.device, train.scaling).
template <typename Enum>
void ReadOneOfTwo(TomlReader& reader, const char* key, std::pair<std::string_view, Enum> first,
                  std::pair<std::string_view, Enum> second, Enum& out) {
  const auto v = reader.String(key);
  if (!v) return;
  if (*v == first.first) {
    out = first.second;
  } else if (*v == second.first) {
    out = second.second;
  } else {
    reader.Fail(key, "invalid value " + Quoted(*v) + ": expected " + Quoted(first.first) +
                         " or " + Quoted(second.first));
  }
}

// model.name or model.torchscript, and data.format (its default follows the model).
void ReadModel(TomlReader& reader, const std::string& base_dir, JobConfig& c) {
  const auto name = reader.String("model.name");
  if (name) c.model.name = *name;
  if (auto v = reader.String("model.torchscript")) {
    if (name) {
      reader.Fail("model.torchscript", "given with model.name = " + Quoted(*name) +
                                           ": expected one of the two");
    }
    if (v->empty()) reader.Fail("model.torchscript", "is empty: expected a TorchScript file");
    c.model.torchscript = ResolvePath(*v, base_dir);
    c.model.name.clear();
  }
  if (!c.model.torchscript.empty()) {
    c.data.format = DatasetKind::kTensors;
  } else if (IsKnownModel(c.model.name)) {
    c.data.format = DatasetOf(c.model.name);
  }
  if (auto v = reader.String("data.format")) {
    std::optional<DatasetKind> format = ParseDatasetKind(*v);
    if (!format) {
      reader.Fail("data.format", "invalid value " + Quoted(*v) +
                                     ": expected \"fashion-mnist\", \"text\" or \"tensors\"");
    }
    c.data.format = *format;
  }
}

// [data]: where and how the training set is read.
void ReadData(TomlReader& reader, const std::string& base_dir, JobConfig& c) {
  if (auto v = reader.String("data.path")) {
    c.data.path = *v;
  } else if (c.data.format == DatasetKind::kTextCorpus) {
    c.data.path = kDefaultCorpusPath;  // the default follows the model's dataset
  } else if (c.data.format == DatasetKind::kTensors) {
    c.data.path.clear();  // no default: Validate asks for one
  }
  if (!c.data.path.empty()) c.data.path = ResolvePath(c.data.path, base_dir);
  if (auto v = reader.Integer("data.cache_mb", 1, kMaxDataCacheMb)) c.data.cache_mb = *v;
  if (auto v = reader.Integer("data.workers", 0, kMaxDataWorkers)) c.data.workers = *v;
  if (auto v = reader.Integer("data.prefetch", 1, kMaxDataPrefetch)) c.data.prefetch = *v;
  ReadOneOfTwo(reader, "data.augment", {"none", Augment::kNone}, {"flip", Augment::kFlip},
               c.data.augment);
}

// [train], what the job computes: ESTs, batch, optimizer, schedule, seed, determinism, plan.
void ReadTrainArithmetic(TomlReader& reader, const std::string& base_dir, JobConfig::Train& t) {
  if (auto v = reader.Integer("train.ests", 1, kMaxEsts)) {
    t.ests = *v;
    t.ests_origin = "train.ests";
  }
  if (auto v = reader.Integer("train.global_batch", 1, kMaxGlobalBatch)) t.global_batch = *v;
  if (auto v = reader.Double("train.lr", 0, kMaxLearningRate)) t.lr = *v;
  if (auto v = reader.Double("train.momentum", 0, 1)) t.momentum = *v;
  if (auto v = reader.Double("train.weight_decay", 0, 1)) t.weight_decay = *v;
  ReadOneOfTwo(reader, "train.lr_schedule", {"constant", LrSchedule::kConstant},
               {"cosine", LrSchedule::kCosine}, t.lr_schedule);
  if (auto v = reader.Integer("train.warmup_steps", 0, kMaxInt)) t.warmup_steps = *v;
  if (auto v = reader.Integer("train.seed", 0, kMaxInt)) t.seed = *v;
  if (auto v = reader.Integer("train.steps", 1, kMaxInt)) t.steps = *v;
  ReadChoice(reader, "train.determinism", &ParseDeterminism, t.determinism);
  ReadChoice(reader, "train.plan", &ParsePlan, t.plan);
  if (auto v = reader.IntegerArray("train.burst_workers", 1, kMaxEsts)) t.burst_workers = *v;
  if (auto v = reader.String("train.burst_plan"); v && !v->empty()) {
    if (!t.burst_workers.empty()) {
      reader.Fail("train.burst_plan", "given with train.burst_workers: expected one of the two");
    }
    t.burst_workers = ReadBurstPlanFile(reader, ResolvePath(*v, base_dir), kMaxEsts);
  }
  ReadOneOfTwo(reader, "train.scaling", {"est", Scaling::kEst}, {"linear", Scaling::kLinear},
               t.scaling);
}

// [train], how it runs: threads, logging, watchdog, device and its memory, perf model.
void ReadTrainRuntime(TomlReader& reader, const std::string& base_dir, JobConfig::Train& t) {
  if (auto v = reader.Integer("train.threads", 1, kMaxThreads)) t.threads = *v;
  if (auto v = reader.Integer("train.cpu_threads", 1, kMaxThreads)) t.cpu_threads = *v;
  if (auto v = reader.Integer("train.log_every", 0, kMaxInt)) t.log_every = *v;
  if (auto v = reader.Integer("train.step_timeout_s", 0, kMaxInt)) t.step_timeout_s = *v;
  if (auto v = reader.Bool("train.host_probe")) t.host_probe = *v;
  ReadOneOfTwo(reader, "train.device", {"cpu", ComputeDevice::kCpu},
               {"cuda", ComputeDevice::kCuda}, t.device);
  if (auto v = reader.String("train.perf_model"); v && !v->empty()) {
    t.perf_model = ResolvePath(*v, base_dir);
  }
  if (auto v = reader.String("train.device_memory")) {
    const std::optional<std::int64_t> bytes = ParseByteSize(*v);
    if (!bytes) {
      reader.Fail("train.device_memory",
                  "invalid value \"" + *v + "\": expected " + std::string(kByteSizeForms));
    }
    t.device_memory = *bytes;
  }
}

void ReadFile(TomlReader& reader, const std::string& base_dir, JobConfig& c) {
  ReadModel(reader, base_dir, c);
  ReadData(reader, base_dir, c);
  ReadTrainArithmetic(reader, base_dir, c.train);
  ReadTrainRuntime(reader, base_dir, c.train);
  if (auto v = reader.String("checkpoint.dir")) c.checkpoint.dir = ResolvePath(*v, base_dir);
  if (auto v = reader.String("background.config"); v && !v->empty()) {
    c.background.config = ResolvePath(*v, base_dir);
  }
  if (auto v = reader.Integer("checkpoint.every_steps", 0, kMaxInt)) c.checkpoint.every_steps = *v;
}

// The SPANK plugin exports the submission flags to every task; they win over the file.
template <typename T>
void Override(const EnvLookup& env, const char* variable, Result<T> (*parse)(std::string_view),
              T& out, std::string& origin) {
  auto text = env(variable);
  if (!text) return;
  Result<T> parsed = parse(*text);
  if (!parsed) throw ConfigError(std::string("environment ") + variable + ": " + parsed.error);
  out = *parsed.value;
  origin = variable;
}

Origins ApplyEnvironment(const EnvLookup& env, JobConfig& c) {
  Origins origins;
  Override(env, "SLURM_ELASTIC_EST", &ParsePositiveCount, c.train.ests, origins.ests);
  if (!origins.ests.empty()) c.train.ests_origin = origins.ests;
  Override(env, "SLURM_ELASTIC_PLAN", &ParsePlan, c.train.plan, origins.plan);
  Override(env, "SLURM_ELASTIC_DETERMINISM", &ParseDeterminism, c.train.determinism,
           origins.determinism);
  PlanArgs plan_args;
  std::string args_origin;
  Override(env, "SLURM_ELASTIC_PLAN_ARGS", &ParsePlanArgs, plan_args, args_origin);
  if (plan_args.cpu_threads) c.train.cpu_threads = *plan_args.cpu_threads;
  if (plan_args.burst_workers) {
    c.train.burst_workers = *plan_args.burst_workers;
    c.train.burst_workers_origin = "SLURM_ELASTIC_PLAN_ARGS";
  }
  // The plugin prepares a private per-job directory; an explicit checkpoint.dir still wins,
  // since a user who names one wants checkpoints there (e.g. to resume across jobs).
  if (c.checkpoint.dir.empty()) {
    if (auto dir = env("SLURM_ELASTIC_CHECKPOINT_DIR"); dir && !dir->empty()) {
      c.checkpoint.dir = *dir;
    }
  }
  return origins;
}

void ValidatePerfModel(TomlReader& reader, const JobConfig& c) {
  if (c.train.perf_model.empty()) return;
  std::error_code error;
  if (!std::filesystem::is_regular_file(c.train.perf_model, error)) {
    reader.Fail("train.perf_model", Quoted(c.train.perf_model) +
                                        " is not a file: expected a fitted.json from "
                                        "`elastic-plan fit` (or drop the key for the built-in "
                                        "model)");
  }
}

// burst's ranks per block: present exactly when the plan is burst (a file that keeps them for
// a generation the supervisor runs with another plan is fine: they are then not used), each
// count at most train.ests (a block needs an EST per rank). The count per block and the ranks of
// the generation are checked when it starts (execution_plan.cc, burst_parallel.cc).
void ValidateBurstWorkers(TomlReader& reader, const JobConfig& c, const Origins& origins) {
  const JobConfig::Train& t = c.train;
  if (t.plan != Plan::kBurst) return;
  auto fail = [&](const std::string& problem) {
    if (t.burst_workers_origin.empty()) reader.Fail("train.burst_workers", problem);
    throw ConfigError("environment " + t.burst_workers_origin + ": burst: " + problem);
  };
  if (t.burst_workers.empty()) {
    reader.Fail("train.plan", "plan \"burst\"" + FromEnv(origins.plan) +
                                  " needs the ranks of each model block: expected "
                                  "train.burst_workers = [g_0, g_1, ...] (e.g. [2, 1, 1, 2]) or "
                                  "SLURM_ELASTIC_PLAN_ARGS=burst=2/1/1/2");
  }
  for (std::size_t b = 0; b < t.burst_workers.size(); ++b) {
    if (t.burst_workers[b] > t.ests) {
      fail("block " + std::to_string(b) + " on " + std::to_string(t.burst_workers[b]) +
           " ranks, but train.ests = " + std::to_string(t.ests) + FromEnv(origins.ests) +
           ": expected at most one rank per EST");
    }
  }
}

// A built-in model reads its own dataset or tensor shards of the same layout; a user's module
// any format (its first forward pass checks the shapes).
void ValidateModelAndData(TomlReader& reader, const JobConfig& c) {
  if (c.model.torchscript.empty() && !IsKnownModel(c.model.name)) {
    reader.Fail("model.name", "unknown model " + Quoted(c.model.name) + ": expected one of " +
                                  std::string(KnownModelNames()) +
                                  ", or model.torchscript = \"FILE\" for your own module");
  }
  if (c.model.torchscript.empty() && c.data.format != DatasetKind::kTensors &&
      c.data.format != DatasetOf(c.model.name)) {
    reader.Fail("data.format", Quoted(ToString(c.data.format)) + ": model " +
                                   Quoted(c.model.name) + " reads " +
                                   Quoted(ToString(DatasetOf(c.model.name))) +
                                   "; expected that or \"tensors\"");
  }
  if (c.data.path.empty()) {
    reader.Fail("data.path", "is not set: data.format = \"tensors\" needs the directory of "
                             "train*.pt shards");
  }
}

void Validate(TomlReader& reader, const JobConfig& c, const Origins& origins,
              const DataCheck& check_data) {
  ValidateModelAndData(reader, c);
  if (check_data) check_data(reader, c);
  ValidatePerfModel(reader, c);
  const JobConfig::Train& t = c.train;
  if (t.lr <= 0) reader.Fail("train.lr", "invalid value 0: expected a number > 0");
  if (t.momentum >= 1) {
    reader.Fail("train.momentum", "invalid value 1: expected a number from 0 to below 1");
  }
  if (t.warmup_steps > t.steps) {
    reader.Fail("train.warmup_steps",
                "invalid value " + std::to_string(t.warmup_steps) +
                    ": expected at most train.steps = " + std::to_string(t.steps));
  }
  if (t.global_batch % t.ests != 0) {
    reader.Fail("train.global_batch",
                std::to_string(t.global_batch) + " is not divisible by train.ests = " +
                    std::to_string(t.ests) + FromEnv(origins.ests) +
                    ": each EST processes global_batch / ests samples per step");
  }
  ValidateBurstWorkers(reader, c, origins);
  if (!PlanAllowedUnder(t.plan, t.determinism)) {
    reader.Fail("train.plan", "plan " + Quoted(ToString(t.plan)) + FromEnv(origins.plan) +
                                  " is not allowed under determinism " +
                                  Quoted(ToString(t.determinism)) + FromEnv(origins.determinism) +
                                  ": it changes the arithmetic, so only \"statistical\" admits it");
  }
}

}  // namespace

std::string ModelLabel(const JobConfig& config) {
  return config.model.torchscript.empty() ? config.model.name : "torchscript";
}

std::string_view ToString(Augment augment) { return augment == Augment::kFlip ? "flip" : "none"; }
std::string_view ToString(LrSchedule schedule) {
  return schedule == LrSchedule::kCosine ? "cosine" : "constant";
}

std::string_view ToString(ComputeDevice device) {
  return device == ComputeDevice::kCuda ? "cuda" : "cpu";
}

std::string_view ToString(Scaling scaling) {
  return scaling == Scaling::kLinear ? "linear" : "est";
}

namespace {

// ParseJobConfig without loading background.config (which only a foreground job may have).
JobConfig ParseOneJobConfig(TomlReader& reader, const EnvLookup& env, const std::string& base_dir,
                            const DataCheck& check_data) {
  JobConfig config;
  ReadFile(reader, base_dir, config);
  // Before the semantic checks: a misspelt key would otherwise surface as a confusing default.
  reader.RejectUnknownKeys();
  Origins origins = ApplyEnvironment(env, config);
  Validate(reader, config, origins, check_data);
  return config;
}

// background.config: the job, and why the idle slots of this one cannot run it.
JobConfig LoadBackgroundJob(TomlReader& reader, const JobConfig& foreground,
                            const DataCheck& check_data) {
  const std::string key = "background.config";
  const std::string& path = foreground.background.config;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    reader.Fail(key, Quoted(path) + " is not a file: expected the background job's config");
  }
  JobConfig job;
  try {
    TomlReader job_reader = TomlReader::FromFile(path);
    job = ParseOneJobConfig(
        job_reader, [](std::string_view) { return std::optional<std::string>(); },
        std::filesystem::path(path).parent_path().string(), check_data);
  } catch (const ConfigError& e) {
    reader.Fail(key, Quoted(path) + ": " + e.what());
  }
  const auto refuse = [&](const std::string& problem) {
    reader.Fail(key, Quoted(path) + ": " + problem);
  };
  if (!job.background.config.empty()) {
    refuse("has a background.config of its own: expected a job without one");
  }
  const Plan plan = job.train.plan;
  if (plan != Plan::kAuto && plan != Plan::kDp && plan != Plan::kGa && plan != Plan::kGc) {
    refuse("train.plan = " + Quoted(ToString(plan)) +
           ": expected \"dp\", \"ga\" or \"gc\" (a background job runs in one process)");
  }
  if (job.train.threads != foreground.train.threads) {
    refuse("train.threads = " + std::to_string(job.train.threads) + ": expected " +
           std::to_string(foreground.train.threads) +
           ", the foreground job's (LibTorch's intra-op thread count is one per process)");
  }
  if (!job.checkpoint.dir.empty()) {
    refuse("checkpoint.dir is set: background jobs keep no checkpoints; expected none");
  }
  job.data.workers = 0;  // its batches are made inside its pieces, on the waiting thread
  return job;
}

}  // namespace

JobConfig ParseJobConfig(TomlReader& reader, const EnvLookup& env, const std::string& base_dir,
                         const DataCheck& check_data) {
  JobConfig config = ParseOneJobConfig(reader, env, base_dir, check_data);
  if (!config.background.config.empty()) {
    config.background.job =
        std::make_shared<const JobConfig>(LoadBackgroundJob(reader, config, check_data));
  }
  return config;
}

JobConfig ReadJobConfigKeys(TomlReader& reader, const EnvLookup& env, const std::string& base_dir) {
  JobConfig config;
  ReadFile(reader, base_dir, config);
  reader.RejectUnknownKeys();
  ApplyEnvironment(env, config);
  return config;
}

JobConfig LoadJobConfig(const std::string& path, const EnvLookup& env,
                        const DataCheck& check_data) {
  TomlReader reader = TomlReader::FromFile(path);
  std::filesystem::path base = std::filesystem::path(path).parent_path();
  if (base.empty()) base = ".";
  return ParseJobConfig(reader, env, std::filesystem::absolute(base).string(), check_data);
}

}  // namespace elastic::agent
