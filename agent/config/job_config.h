// The job configuration of elastic-agent (design.md §2): a TOML file into a plain struct with
// named defaults, then the SLURM_ELASTIC_* variables the SPANK plugin sets override it.
// Error model: every problem throws elastic::ConfigError whose message names the file and line
// (or the environment variable), the key, the value and what was expected.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/config/model_catalog.h"
#include "common/env.h"
#include "common/job_options.h"

namespace elastic {
class TomlReader;
}

namespace elastic::agent {

inline constexpr std::string_view kDefaultModel = "fmnist_cnn";
inline constexpr std::string_view kDefaultDataPath = "/usr/share/datasets/fashion-mnist";
// data.path's default for a model that reads the text corpus (Debian's fortunes-min).
inline constexpr std::string_view kDefaultCorpusPath = "/usr/share/games/fortunes";
// One EST unless the job says otherwise: elastic jobs get SLURM_ELASTIC_EST from the plugin
// (default MAX nodes x tasks per node), so this only applies to plain, non-elastic runs.
inline constexpr std::int64_t kDefaultEsts = 1;

// How a run on W ranks relates to the configured batch and learning rate (train.scaling).
enum class Scaling {
  kEst,     // "est": E ESTs whatever W is, so W never changes the arithmetic (the default)
  kLinear,  // "linear": TorchElastic-style comparison mode, one worker per rank with a fixed
            // per-worker batch: global batch and lr scale with W (ScaledForWorld, train_command.h)
};
inline constexpr Scaling kDefaultScaling = Scaling::kEst;
std::string_view ToString(Scaling scaling);
inline constexpr std::int64_t kDefaultGlobalBatch = 256;
inline constexpr double kDefaultLearningRate = 0.05;
inline constexpr double kDefaultMomentum = 0.9;
inline constexpr std::int64_t kDefaultSeed = 1;
inline constexpr std::int64_t kDefaultSteps = 200;
inline constexpr Determinism kDefaultDeterminism = Determinism::kD1;
inline constexpr Plan kDefaultPlan = Plan::kAuto;
inline constexpr std::int64_t kDefaultThreads = 1;
inline constexpr std::int64_t kDefaultLogEvery = 10;
// A rank that sees no step complete for this long ends itself (a stalled peer); 0 = never.
inline constexpr std::int64_t kDefaultStepTimeoutS = 600;
inline constexpr std::int64_t kDefaultCheckpointEverySteps = 0;
inline constexpr std::int64_t kMaxThreads = 256;
inline constexpr std::int64_t kMaxEsts = 1 << 20;  // the same bound as --elastic-est
// Host threads that run ZeRO-Offload's optimizer update (Rubick's c); changes no bit.
inline constexpr std::int64_t kDefaultCpuThreads = 1;

// The shared data loaders of a rank (EasyScale §3.2): none of these change any result bit.
inline constexpr std::int64_t kDefaultDataWorkers = 1;  // loader threads; 0 = in the trainer
inline constexpr std::int64_t kMaxDataWorkers = 64;
inline constexpr std::int64_t kDefaultDataPrefetch = 4;  // EST mini-batches prepared ahead
inline constexpr std::int64_t kMaxDataPrefetch = 1024;
// data.cache_mb: the bound of a rank's cache of loaded tensor shards (data.format = "tensors");
// at least one shard is always held, whatever its size.
inline constexpr std::int64_t kDefaultDataCacheMb = 2048;
inline constexpr std::int64_t kMaxDataCacheMb = std::int64_t{1} << 30;

// Data augmentation, drawn from each EST's own data stream (data.augment).
enum class Augment {
  kNone,  // "none": the normalised images as they are (the default)
  kFlip,  // "flip": each sample mirrored left-right with probability 1/2
};
inline constexpr Augment kDefaultAugment = Augment::kNone;
std::string_view ToString(Augment augment);

// How the learning rate moves over the job's train.steps (train.lr_schedule), after
// train.warmup_steps of linear warmup; a pure function of the step (agent/train/lr_schedule.h),
// so a resumed or resized job continues the same curve.
enum class LrSchedule {
  kConstant,  // "constant": train.lr at every step (the default)
  kCosine,    // "cosine": from train.lr down a half cosine towards 0 at train.steps
};
std::string_view ToString(LrSchedule schedule);

// Where a rank's model trains (train.device). The host keeps the data loaders, the EST contexts,
// the gradient exchange and (zero-offload) the optimizer; "cuda" moves the model, its forward
// and backward and (other plans) the optimizer step onto the rank's GPU (agent/train/device.h).
enum class ComputeDevice {
  kCpu,   // "cpu" (the default)
  kCuda,  // "cuda": needs a CUDA LibTorch and a visible GPU
};
std::string_view ToString(ComputeDevice device);

struct JobConfig {
  struct Model {
    std::string name{kDefaultModel};  // a built-in model; "" when torchscript is set
    // A user's module saved by torch.jit.script/trace (agent/model/torchscript_model.h);
    // absolute after loading; "" = the built-in model.name.
    std::string torchscript;
  } model;
  struct Data {
    std::string path{kDefaultDataPath};            // absolute after loading (see LoadJobConfig)
    // data.format: the built-in model's own dataset unless set; "tensors" for a torchscript one.
    DatasetKind format = DatasetKind::kFashionMnist;
    std::int64_t cache_mb = kDefaultDataCacheMb;   // tensor shards held in memory at once
    std::int64_t workers = kDefaultDataWorkers;    // loader threads shared by a rank's ESTs
    std::int64_t prefetch = kDefaultDataPrefetch;  // bound of the rank's batch queue
    Augment augment = kDefaultAugment;
  } data;
  struct Train {
    std::int64_t ests = kDefaultEsts;  // EasyScaleThreads: logical data-parallel workers
    // Who set ests: "train.ests", "SLURM_ELASTIC_EST" (--elastic-est), or "" for the default
    // (`elastic-agent run` then picks MAX nodes x ranks per node, agent/supervisor/job_shape.h).
    std::string ests_origin;
    std::int64_t global_batch = kDefaultGlobalBatch;  // samples per step, all ESTs together
    double lr = kDefaultLearningRate;
    double momentum = kDefaultMomentum;
    // SGD's L2 weight decay, added to each gradient before momentum as torch.optim.SGD does.
    double weight_decay = 0.0;
    LrSchedule lr_schedule = LrSchedule::kConstant;
    std::int64_t warmup_steps = 0;  // lr rises linearly over these first steps
    std::int64_t seed = kDefaultSeed;
    std::int64_t steps = kDefaultSteps;
    Determinism determinism = kDefaultDeterminism;
    Plan plan = kDefaultPlan;
    std::int64_t threads = kDefaultThreads;     // intra-op threads; from config, never hardware
    std::int64_t cpu_threads = kDefaultCpuThreads;  // zero-offload's host update threads (c)
    // burst (DeepPool): how many ranks run each model block, one count per block, each from 1
    // to train.ests (and at most the generation's ranks, checked when it starts). Read only
    // when train.plan is "burst"; empty otherwise. SLURM_ELASTIC_PLAN_ARGS burst=... overrides.
    std::vector<std::int64_t> burst_workers;
    std::string burst_workers_origin;  // "" = train.burst_workers, else the variable's name
    std::int64_t log_every = kDefaultLogEvery;  // progress line interval in steps; 0 = none
    std::int64_t step_timeout_s = kDefaultStepTimeoutS;  // stalled-peer watchdog; 0 = off
    // Profiling aid: time a fixed kernel before each step, outside the step's time, and add
    // its slowest rank's time to the progress lines (probe_ms=; agent/train/host_probe.h).
    bool host_probe = false;
    ComputeDevice device = ComputeDevice::kCpu;
    Scaling scaling = kDefaultScaling;
    // A fitted.json (perf/rubick/perf_json.h) the supervisor predicts plans with; empty =
    // its built-in model (agent/supervisor/default_perf_model.h). Absolute after loading.
    std::string perf_model;
    // The memory budget of one rank's device in bytes (train.device_memory, "SIZE"); 0 = the
    // device's own (CPU ranks: their share of the node's memory). The supervisor rules out plans
    // whose estimate exceeds it (perf/rubick/agent_memory.h); the step itself does not read it.
    std::int64_t device_memory = 0;
  } train;
  struct Checkpoint {
    std::string dir;                                          // empty = no checkpoints
    std::int64_t every_steps = kDefaultCheckpointEverySteps;  // 0 = on demand only
  } checkpoint;
  // A background job (DeepPool §4-§5) each rank of a burst plan trains in its idle slots
  // (agent/train/background_job.h): another job config, loaded with this one.
  struct Background {
    std::string config;                  // absolute after loading; empty = none
    std::shared_ptr<const JobConfig> job;  // the loaded config; null = none
  } background;

  // Samples each EST processes per step.
  std::int64_t est_batch() const { return train.global_batch / train.ests; }
};

// The model's name in messages, fingerprints and profiles: model.name, or "torchscript" for a
// user's module.
std::string ModelLabel(const JobConfig& config);

// Per-plan parameters the supervisor hands one generation beside SLURM_ELASTIC_PLAN, in
// SLURM_ELASTIC_PLAN_ARGS: comma-separated key=value: c=<1..256> (zero-offload's host threads,
// overriding train.cpu_threads; changes no bit) and burst=<g_0>/<g_1>/... (burst's ranks per
// model block, overriding train.burst_workers). "" = none. A separate variable, not a
// suffix of SLURM_ELASTIC_PLAN, because the SPANK plugin parses that one as a plain plan word.
struct PlanArgs {
  std::optional<std::int64_t> cpu_threads;
  std::optional<std::vector<std::int64_t>> burst_workers;
};
Result<PlanArgs> ParsePlanArgs(std::string_view text);

// Checks data.path's contents for the job's model; fails through `reader` like every other check.
using DataCheck = std::function<void(TomlReader& reader, const JobConfig& config)>;

// Reads `path`, applies environment overrides from `env` and validates. Relative data.path,
// checkpoint.dir and background.config are resolved against the directory of `path`, so a config
// works from any cwd. A background.config is loaded too, without environment overrides (the
// SLURM_ELASTIC_* flags are the foreground job's), and must be a job the idle slots can run: a
// dp/ga/gc plan, the foreground's train.threads (LibTorch's thread count is per process), no
// checkpoint.dir and no background of its own.
// `check_data` checks data.path's contents for the model (the agent passes CheckTrainingData,
// agent/data/dataset_checks.h); empty = not checked (the supervisor, which trains nothing).
JobConfig LoadJobConfig(const std::string& path, const EnvLookup& env,
                        const DataCheck& check_data = {});

// The same from an already-open reader (tests use TomlReader::FromString). Relative paths are
// resolved against `base_dir`.
JobConfig ParseJobConfig(TomlReader& reader, const EnvLookup& env, const std::string& base_dir,
                         const DataCheck& check_data = {});

// The keys (unknown ones refused) and the SLURM_ELASTIC_* overrides, without the semantic
// checks and without loading background.config: for the supervisor, which runs after the
// agent's LoadJobConfig checked the same file (agent/main.cc), so both read it with one parser.
JobConfig ReadJobConfigKeys(TomlReader& reader, const EnvLookup& env, const std::string& base_dir);

}  // namespace elastic::agent
