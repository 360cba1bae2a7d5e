// Loading, environment overrides and validation of the job config.
#include "agent/config/job_config.h"

#include <cstdint>
#include <filesystem>
#include <limits>
#include <system_error>

#include "agent/data/fashion_mnist_files.h"
#include "agent/model/registry.h"
#include "scheduler/common/toml_reader.h"

namespace elastic::agent {
namespace {

constexpr std::int64_t kMaxEsts = 1 << 20;  // the same bound as --elastic-est
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

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string ResolvePath(const std::string& path, const std::string& base_dir) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

template <typename T>
void ReadChoice(TomlReader& reader, std::string_view key, Parsed<T> (*parse)(std::string_view),
                T& out) {
  if (auto text = reader.String(key)) {
    Parsed<T> parsed = parse(*text);
    if (!parsed) reader.Fail(key, parsed.error);
    out = *parsed.value;
  }
}

void ReadFile(TomlReader& reader, const std::string& base_dir, JobConfig& c) {
  if (auto v = reader.String("model.name")) c.model.name = *v;
  if (auto v = reader.String("data.path")) c.data.path = *v;
  c.data.path = ResolvePath(c.data.path, base_dir);
  if (auto v = reader.Integer("data.workers", 0, kMaxDataWorkers)) c.data.workers = *v;
  if (auto v = reader.Integer("data.prefetch", 1, kMaxDataPrefetch)) c.data.prefetch = *v;
  if (auto v = reader.String("data.augment")) {
    if (*v == "none") {
      c.data.augment = Augment::kNone;
    } else if (*v == "flip") {
      c.data.augment = Augment::kFlip;
    } else {
      reader.Fail("data.augment",
                  "invalid value " + Quoted(*v) + ": expected \"none\" or \"flip\"");
    }
  }

  JobConfig::Train& t = c.train;
  if (auto v = reader.Integer("train.ests", 1, kMaxEsts)) t.ests = *v;
  if (auto v = reader.Integer("train.global_batch", 1, kMaxGlobalBatch)) t.global_batch = *v;
  if (auto v = reader.Double("train.lr", 0, kMaxLearningRate)) t.lr = *v;
  if (auto v = reader.Double("train.momentum", 0, 1)) t.momentum = *v;
  if (auto v = reader.Integer("train.seed", 0, kMaxInt)) t.seed = *v;
  if (auto v = reader.Integer("train.steps", 1, kMaxInt)) t.steps = *v;
  ReadChoice(reader, "train.determinism", &ParseDeterminism, t.determinism);
  ReadChoice(reader, "train.plan", &ParsePlan, t.plan);
  if (auto v = reader.Integer("train.threads", 1, kMaxThreads)) t.threads = *v;
  if (auto v = reader.Integer("train.cpu_threads", 1, kMaxThreads)) t.cpu_threads = *v;
  if (auto v = reader.Integer("train.log_every", 0, kMaxInt)) t.log_every = *v;
  if (auto v = reader.Integer("train.step_timeout_s", 0, kMaxInt)) t.step_timeout_s = *v;
  if (auto v = reader.String("train.scaling")) {
    if (*v == "est") {
      t.scaling = Scaling::kEst;
    } else if (*v == "linear") {
      t.scaling = Scaling::kLinear;
    } else {
      reader.Fail("train.scaling",
                  "invalid value " + Quoted(*v) + ": expected \"est\" or \"linear\"");
    }
  }

  if (auto v = reader.String("checkpoint.dir")) c.checkpoint.dir = ResolvePath(*v, base_dir);
  if (auto v = reader.Integer("checkpoint.every_steps", 0, kMaxInt)) c.checkpoint.every_steps = *v;
}

// The SPANK plugin exports the submission flags to every task; they win over the file.
template <typename T>
void Override(const EnvLookup& env, const char* variable, Parsed<T> (*parse)(std::string_view),
              T& out, std::string& origin) {
  auto text = env(variable);
  if (!text) return;
  Parsed<T> parsed = parse(*text);
  if (!parsed) throw ConfigError(std::string("environment ") + variable + ": " + parsed.error);
  out = *parsed.value;
  origin = variable;
}

Origins ApplyEnvironment(const EnvLookup& env, JobConfig& c) {
  Origins origins;
  Override(env, "SLURM_ELASTIC_EST", &ParsePositiveCount, c.train.ests, origins.ests);
  Override(env, "SLURM_ELASTIC_PLAN", &ParsePlan, c.train.plan, origins.plan);
  Override(env, "SLURM_ELASTIC_DETERMINISM", &ParseDeterminism, c.train.determinism,
           origins.determinism);
  // The plugin prepares a private per-job directory; an explicit checkpoint.dir still wins,
  // since a user who names one wants checkpoints there (e.g. to resume across jobs).
  if (c.checkpoint.dir.empty()) {
    if (auto dir = env("SLURM_ELASTIC_CHECKPOINT_DIR"); dir && !dir->empty()) {
      c.checkpoint.dir = *dir;
    }
  }
  return origins;
}

void ValidateData(TomlReader& reader, const JobConfig& c) {
  std::error_code error;
  if (!std::filesystem::is_directory(c.data.path, error)) {
    reader.Fail("data.path", Quoted(c.data.path) +
                                 " is not a directory: expected the "
                                 "Fashion-MNIST directory (Debian package dataset-fashion-mnist)");
  }
  std::string missing;
  if (!FindSplitFiles(c.data.path, Split::kTrain, &missing)) {
    reader.Fail("data.path", Quoted(c.data.path) + " has no " + missing +
                                 ": expected the Fashion-MNIST IDX files");
  }
}

void Validate(TomlReader& reader, const JobConfig& c, const Origins& origins) {
  if (!IsKnownModel(c.model.name)) {
    reader.Fail("model.name", "unknown model " + Quoted(c.model.name) + ": expected one of " +
                                  std::string(KnownModelNames()));
  }
  ValidateData(reader, c);
  const JobConfig::Train& t = c.train;
  if (t.lr <= 0) reader.Fail("train.lr", "invalid value 0: expected a number > 0");
  if (t.momentum >= 1) {
    reader.Fail("train.momentum", "invalid value 1: expected a number from 0 to below 1");
  }
  if (t.global_batch % t.ests != 0) {
    reader.Fail("train.global_batch",
                std::to_string(t.global_batch) + " is not divisible by train.ests = " +
                    std::to_string(t.ests) + FromEnv(origins.ests) +
                    ": each EST processes global_batch / ests samples per step");
  }
  if (!PlanAllowedUnder(t.plan, t.determinism)) {
    reader.Fail("train.plan", "plan " + Quoted(ToString(t.plan)) + FromEnv(origins.plan) +
                                  " is not allowed under determinism " +
                                  Quoted(ToString(t.determinism)) + FromEnv(origins.determinism) +
                                  ": it changes the arithmetic, so only \"statistical\" admits it");
  }
}

}  // namespace

std::string_view ToString(Augment augment) { return augment == Augment::kFlip ? "flip" : "none"; }

std::string_view ToString(Scaling scaling) {
  return scaling == Scaling::kLinear ? "linear" : "est";
}

JobConfig ParseJobConfig(TomlReader& reader, const EnvLookup& env, const std::string& base_dir) {
  JobConfig config;
  ReadFile(reader, base_dir, config);
  // Before the semantic checks: a misspelt key would otherwise surface as a confusing default.
  reader.RejectUnknownKeys();
  Origins origins = ApplyEnvironment(env, config);
  Validate(reader, config, origins);
  return config;
}

JobConfig LoadJobConfig(const std::string& path, const EnvLookup& env) {
  TomlReader reader = TomlReader::FromFile(path);
  std::filesystem::path base = std::filesystem::path(path).parent_path();
  if (base.empty()) base = ".";
  return ParseJobConfig(reader, env, std::filesystem::absolute(base).string());
}

}  // namespace elastic::agent
