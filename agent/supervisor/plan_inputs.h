// What the supervisor needs to choose each generation's plan (plan_selection.h): the job's
// request from its config file and SLURM_ELASTIC_* overrides, the performance model
// (train.perf_model's fitted.json, else a built-in one), and the node resources Slurm gives.
// The adapter between files/environment and the pure plan choice.
// Errors: ReadPlanInputs throws ConfigError naming the key or file, the value, what was expected.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/env.h"
#include "perf/rubick/plan_selection.h"
#include "perf/rubick/perf_json.h"

namespace elastic::agent {

struct PlanInputs {
  PlanRequest request;
  std::string model_name;  // model.name, or "torchscript" for a user's module (ModelLabel)
  // none: launches run the requested plan until the agent's first model-size line bootstraps one
  // (generation_planner.h)
  std::optional<perf::FittedModel> model;
  std::string model_source;                // for the log: where the model came from, or why none
  std::string budget_source;  // for the log: the memory budget per rank and where it came from
  bool cuda = false;          // train.device = "cuda"
  // Whether train.ests (or SLURM_ELASTIC_EST) set E; without it `elastic-agent run` picks MAX
  // nodes x ranks per node (job_shape.h), which only the running job knows.
  bool ests_given = false;
  // Where the job's checkpoints go (checkpoint.dir, else SLURM_ELASTIC_CHECKPOINT_DIR; "" =
  // none): the online refit is saved there (refit_store.h).
  std::string checkpoint_dir;
};

// The config keys the plan choice reads (model.name, train.ests, global_batch, determinism,
// plan, cpu_threads, perf_model, checkpoint.dir), read by the agent's own torch-free parser
// (agent/config's ReadJobConfigKeys) with the same SLURM_ELASTIC_* overrides. The agent's
// LoadJobConfig checked the whole file before the supervisor starts (agent/main.cc).
// A cuda job without train.device_memory gets its GPUs' own memory (gpu_memory.h, NVML) less
// kGpuFrameworkReserve, the CUDA context's and allocator's share.
PlanInputs ReadPlanInputs(const std::string& config_path, const EnvLookup& env);

// Of a GPU's total memory, what LibTorch's context and caching allocator keep for themselves
// (Rubick's gpu_mem_bytes is what the framework leaves for training).
inline constexpr double kGpuFrameworkReserve = 0.10;

// The same from TOML text (tests); relative paths resolve against `base_dir`. `read_file`
// returns a file's contents or nullopt when it cannot be read.
PlanInputs ParsePlanInputs(
    std::string_view toml, const std::string& source_name, const std::string& base_dir,
    const EnvLookup& env,
    const std::function<std::optional<std::string>(const std::string&)>& read_file);

// The smallest CPU count of SLURM_JOB_CPUS_PER_NODE ("4(x3),2" -> 2); 0 when empty or malformed.
int MinCpusPerNode(std::string_view cpus_per_node);

// The allocation from Slurm's variables after the (re)launch's ExportAllocation: `nodes` nodes,
// RanksPerNodeFromEnv agent ranks each (job_shape.h), SLURM_JOB_CPUS_PER_NODE, SLURM_MEM_PER_NODE (MiB; absent = unknown).
NodeAllocation AllocationFromEnv(int nodes, const EnvLookup& env);

}  // namespace elastic::agent
