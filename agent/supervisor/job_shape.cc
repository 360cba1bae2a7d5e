// Ranks per node from Slurm's GPU and task variables, and the default EST count.
#include "agent/supervisor/job_shape.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

constexpr int kMaxRanksPerNode = 1024;

// A whole decimal count in [0, kMaxRanksPerNode]; nullopt for anything else.
std::optional<int> Count(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 ||
      value > kMaxRanksPerNode) {
    return std::nullopt;
  }
  return value;
}

[[noreturn]] void Malformed(std::string_view name, const std::string& value,
                            std::string_view expected) {
  throw ConfigError("environment " + std::string(name) + "=" + value + ": expected " +
                    std::string(expected) + " (0.." + std::to_string(kMaxRanksPerNode) + ")");
}

// SLURM_GPUS_PER_NODE is --gpus-per-node's text: N or type:N.
std::optional<int> GpusPerNode(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  return Count(colon == std::string::npos ? std::string_view(text)
                                          : std::string_view(text).substr(colon + 1));
}

// SLURM_JOB_GPUS lists the GPU indices on the batch node: "0,1,2,3".
int ListedGpus(const std::string& text) {
  return text.empty() ? 0 : static_cast<int>(std::count(text.begin(), text.end(), ',')) + 1;
}

RanksPerNode Found(int ranks, std::string_view name, const std::string& value) {
  return {ranks, std::string(name) + "=" + value};
}

}  // namespace

RanksPerNode RanksPerNodeFromEnv(const EnvLookup& env) {
  if (auto v = env("SLURM_GPUS_ON_NODE")) {
    std::optional<int> gpus = Count(*v);
    if (!gpus) Malformed("SLURM_GPUS_ON_NODE", *v, "a GPU count");
    if (*gpus > 0) return Found(*gpus, "SLURM_GPUS_ON_NODE", *v);
  }
  if (auto v = env("SLURM_GPUS_PER_NODE")) {
    std::optional<int> gpus = GpusPerNode(*v);
    if (!gpus) Malformed("SLURM_GPUS_PER_NODE", *v, "N or TYPE:N GPUs");
    if (*gpus > 0) return Found(*gpus, "SLURM_GPUS_PER_NODE", *v);
  }
  if (auto v = env("SLURM_JOB_GPUS"); v && ListedGpus(*v) > 0) {
    return Found(std::min(ListedGpus(*v), kMaxRanksPerNode), "SLURM_JOB_GPUS", *v);
  }
  if (auto v = env("SLURM_NTASKS_PER_NODE")) {
    std::optional<int> tasks = Count(*v);
    if (!tasks || *tasks == 0) Malformed("SLURM_NTASKS_PER_NODE", *v, "a task count of 1 or more");
    return Found(*tasks, "SLURM_NTASKS_PER_NODE", *v);
  }
  return {};
}

std::vector<std::string> SrunCpuFlags(int cpus_per_node, int ranks_per_node) {
  if (cpus_per_node <= 0 || ranks_per_node <= 0) return {};
  if (cpus_per_node < ranks_per_node) return {"--overcommit"};
  return {"--cpus-per-task=" + std::to_string(cpus_per_node / ranks_per_node)};
}

EstCount JobEstCount(std::int64_t given_ests, const std::string& given_origin,
                     std::int64_t global_batch, int max_nodes, const RanksPerNode& ranks) {
  if (!given_origin.empty()) return {given_ests, given_origin, false};
  const std::int64_t ests =
      static_cast<std::int64_t>(std::max(1, max_nodes)) * std::max(1, ranks.ranks);
  const std::string origin = "default: MAX nodes " + std::to_string(std::max(1, max_nodes)) +
                             " x ranks per node " + std::to_string(std::max(1, ranks.ranks)) +
                             (ranks.source.empty() ? "" : " (" + ranks.source + ")");
  if (global_batch % ests != 0) {
    throw ConfigError("train.ests: the " + origin + " = " + std::to_string(ests) +
                      " ESTs does not divide train.global_batch = " +
                      std::to_string(global_batch) +
                      ": expected --elastic-est=N or train.ests = N with N dividing it");
  }
  return {ests, origin, true};
}

}  // namespace elastic::agent
