// The job's shape under `elastic-agent run`: how many ranks each node runs (one per GPU the job
// holds there, else --ntasks-per-node, else 1) and the EST count when the job names none
// (--elastic-est's help: MAX nodes x ranks per node). Pure: reads Slurm's variables through an
// EnvLookup. Errors: ConfigError naming the variable or key, its value and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/env.h"

namespace elastic::agent {

struct RanksPerNode {
  int ranks = 1;
  std::string source;  // for the log, e.g. "SLURM_GPUS_ON_NODE=4"; "" = the default 1
};

// One rank per GPU when the job holds GPUs on its nodes (SLURM_GPUS_ON_NODE, else
// SLURM_GPUS_PER_NODE = [type:]N, else the count of SLURM_JOB_GPUS), else SLURM_NTASKS_PER_NODE,
// else 1. Read once when the supervisor starts: resizes keep the job's per-node request.
RanksPerNode RanksPerNodeFromEnv(const EnvLookup& env);

// srun's CPU flags for `ranks_per_node` ranks on nodes of which the job holds `cpus_per_node`
// CPUs (the smallest node's; 0 = unknown): each rank its share (--cpus-per-task), or, when the
// job holds fewer CPUs than ranks on a node (a `--gres=gpu:8` job gets one CPU per node unless
// it asks for more), --overcommit so that the ranks share them rather than the step failing
// ("More processors requested than permitted"). No flag when the CPUs are unknown.
std::vector<std::string> SrunCpuFlags(int cpus_per_node, int ranks_per_node);

struct EstCount {
  std::int64_t ests = 1;
  std::string origin;  // "train.ests", "SLURM_ELASTIC_EST" or "default: MAX nodes ..."
  bool defaulted = false;  // the supervisor must hand `ests` to every step (SLURM_ELASTIC_EST)
};

// The job's EST count: the one it names (`given_origin` not empty), else `max_nodes` x ranks per
// node. Throws ConfigError when that default does not divide train.global_batch.
EstCount JobEstCount(std::int64_t given_ests, const std::string& given_origin,
                     std::int64_t global_batch, int max_nodes, const RanksPerNode& ranks);

}  // namespace elastic::agent
