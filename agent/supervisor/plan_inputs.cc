// Reading the plan choice's inputs: config keys, SLURM_* variables and the fitted model file.
#include "agent/supervisor/plan_inputs.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "agent/config/job_config.h"
#include "agent/supervisor/gpu_memory.h"
#include "agent/supervisor/job_shape.h"
#include "common/byte_size.h"
#include "perf/rubick/default_perf_model.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

std::string Describe(const perf::FittedModel& m) {
  char text[96];
  std::snprintf(text, sizeof text, " (%d profiled points, RMSLE %.3f)", m.points, m.rmsle);
  return text;
}

// train.perf_model's fitted.json, checked against the job's model.
perf::FittedModel LoadFitted(
    TomlReader& reader, const std::string& path, const std::string& model_name,
    const std::function<std::optional<std::string>(const std::string&)>& read_file) {
  std::optional<std::string> text = read_file(path);
  if (!text) {
    reader.Fail("train.perf_model", "\"" + path +
                                        "\" cannot be read: expected a fitted.json "
                                        "(elastic-plan fit)");
  }
  Result<perf::FittedModel> fitted = perf::FittedModelFromJson(*text);
  if (!fitted) reader.Fail("train.perf_model", "\"" + path + "\": " + fitted.error);
  if (fitted->model_name != model_name) {
    reader.Fail("train.perf_model", "\"" + path + "\" describes model \"" + fitted->model_name +
                                        "\" but model.name is \"" + model_name +
                                        "\": expected a fit of the job's model");
  }
  return *fitted;
}

// A cuda job without train.device_memory: its GPUs' own memory less the framework's reserve.
void UseGpuMemoryBudget(PlanInputs& in) {
  std::string why;
  const std::optional<GpuMemory> gpus = ReadGpuMemory(why);
  if (!gpus) {
    in.budget_source = "unchecked (a cuda job without train.device_memory: " + why + ")";
    return;
  }
  in.request.device_memory_bytes = gpus->smallest_total_bytes * (1.0 - kGpuFrameworkReserve);
  in.budget_source = FormatByteSize(in.request.device_memory_bytes) +
                     " per rank (the smallest of this node's " + std::to_string(gpus->devices) +
                     " GPU(s), NVML, less " +
                     std::to_string(static_cast<int>(kGpuFrameworkReserve * 100)) +
                     " % for the framework)";
}

}  // namespace

PlanInputs ParsePlanInputs(
    std::string_view toml, const std::string& source_name, const std::string& base_dir,
    const EnvLookup& env,
    const std::function<std::optional<std::string>(const std::string&)>& read_file) {
  TomlReader reader = TomlReader::FromString(toml, source_name);
  // The agent's own parser, keys and SLURM_ELASTIC_* overrides alike (agent/config).
  const JobConfig job = ReadJobConfigKeys(reader, env, base_dir);
  PlanInputs in;
  PlanRequest& r = in.request;
  r.ests = job.train.ests;
  r.global_batch = job.train.global_batch;
  r.cpu_threads = job.train.cpu_threads;
  r.requested = job.train.plan;
  r.determinism = job.train.determinism;
  r.device_memory_bytes = static_cast<double>(job.train.device_memory);
  in.budget_source = job.train.device_memory > 0
                         ? FormatByteSize(r.device_memory_bytes) + " per rank (train.device_memory)"
                         : "a CPU rank's share of SLURM_MEM_PER_NODE where set, else unchecked";
  in.cuda = job.train.device == ComputeDevice::kCuda;
  in.ests_given = !job.train.ests_origin.empty();
  r.momentum_buffers = job.train.momentum != 0;
  const std::string model_name = ModelLabel(job);
  in.model_name = model_name;
  if (!job.train.perf_model.empty()) {
    in.model = LoadFitted(reader, job.train.perf_model, model_name, read_file);
    in.model_source = "fitted model " + job.train.perf_model + Describe(*in.model);
  } else if ((in.model = BuiltInPerfModel(model_name))) {
    in.model_source = "built-in default model of " + model_name +
                      " (no train.perf_model: Rubick's default parameters, assumed bandwidths; "
                      "predictions rank plans coarsely)";
  } else {
    in.model_source = "none yet: no train.perf_model and no built-in model of " + model_name +
                      ", so launches run the requested plan (auto runs dp) until the first "
                      "generation's measurements bootstrap one";
  }
  in.checkpoint_dir = job.checkpoint.dir;  // checkpoint.dir, else SLURM_ELASTIC_CHECKPOINT_DIR
  const ModelShape shape = BuiltInModelShape(model_name);
  r.model_blocks = shape.blocks;
  r.tp_heads = shape.tp_heads;
  r.whole_module = !job.model.torchscript.empty();
  return in;
}

PlanInputs ReadPlanInputs(const std::string& config_path, const EnvLookup& env) {
  std::optional<std::string> text = ReadWholeFile(config_path);
  if (!text) throw ConfigError(config_path + ": cannot be read");
  std::filesystem::path base = std::filesystem::path(config_path).parent_path();
  if (base.empty()) base = ".";
  PlanInputs in = ParsePlanInputs(*text, std::filesystem::path(config_path).filename().string(),
                                  std::filesystem::absolute(base).string(), env, &ReadWholeFile);
  if (in.cuda && in.request.device_memory_bytes <= 0) UseGpuMemoryBudget(in);
  return in;
}

int MinCpusPerNode(std::string_view text) {
  // Groups "N" or "N(xR)", comma-separated (Slurm's SLURM_JOB_CPUS_PER_NODE).
  int smallest = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view group = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t paren = group.find('(');
    std::string_view count = group.substr(0, paren);
    int value = 0;
    auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), value);
    if (ec != std::errc() || end != count.data() + count.size() || value < 1) return 0;
    if (paren != std::string_view::npos &&
        (group.substr(paren, 2) != "(x" || group.back() != ')')) {
      return 0;
    }
    smallest = smallest == 0 ? value : std::min(smallest, value);
  }
  return smallest;
}

NodeAllocation AllocationFromEnv(int nodes, const EnvLookup& env) {
  NodeAllocation a;
  a.nodes = nodes;
  a.workers_per_node = RanksPerNodeFromEnv(env).ranks;  // the supervisor's srun per node
  if (auto cpus = env("SLURM_JOB_CPUS_PER_NODE")) a.cpus_per_node = MinCpusPerNode(*cpus);
  if (auto mem = env("SLURM_MEM_PER_NODE")) {
    long long mib = 0;
    auto [end, ec] = std::from_chars(mem->data(), mem->data() + mem->size(), mib);
    if (ec == std::errc() && end == mem->data() + mem->size() && mib > 0) {
      a.mem_bytes_per_node = static_cast<double>(mib) * 1024.0 * 1024.0;
    }
  }
  return a;
}

}  // namespace elastic::agent
