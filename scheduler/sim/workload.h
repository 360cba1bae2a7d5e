// Trace rows to policy jobs: what the trace does not record (SLA class, tenant quotas, growth
// bounds, per-job model parameters, execution plans, CPU and host-memory needs) drawn
// deterministically from hashes of the job id and the seed. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "scheduler/policy/policy.h"
#include "scheduler/sim/trace.h"

namespace elastic::sim {

struct SimOptions {
  std::uint64_t seed = 1;                // picks each job's comm_ratio (hash of seed and job id)
  double min_comm_ratio = 0.005;         // per-job all-reduce/compute ratio drawn uniformly in
  double max_comm_ratio = 0.05;          //   [min, max] (the trace has no model information)
  int reference_devices_per_node = 8;    // the trace's jobs were packed on nodes this size
  double resize_cost_s = 30.0;           // model::ResizeCost{}.Seconds()
  double elastic_min_fraction = 0.0;     // elastic jobs: min = max(1, ceil(fraction x gpus))
  // Policies that grow past the request (rubick, elastic): max = gpus x the largest factor of
  // {max_growth_factor, 2, 1} keeping max <= max_growth_cap and <= the largest device type, so
  // max is a multiple of gpus (ESTs divide evenly at the requested size); ESTs = max.
  int max_growth_factor = 4;
  int max_growth_cap = 64;
  // Rigid jobs among elastic ones: a job is rigid if hash(id) < rigid_fraction (seed-free).
  double rigid_fraction = 0.0;
  // SLA classes (Rubick §3): a job is guaranteed if hash(id) < guaranteed_fraction (seed-free);
  // each tenant (`vc` column, else "default") gets quota_fraction x cluster devices x its share
  // of the trace's guaranteed GPU-seconds, rounded down.
  double guaranteed_fraction = 0.5;
  double quota_fraction = 0.5;
  // Execution plans (model::Plan): each job's replica memory is drawn uniformly in
  // [0, memory_need_max] device memories by hashing (seed, id), capped so some plan fits at the
  // requested size; the user's plan is a hashed pick among the plans that fit there, and the
  // trace duration is its run time under that plan. Policies that reconfigure plans run the best
  // plan per allocation; the others keep the user's plan (and sizes where it fits). 0: off.
  double memory_need_max = 0.0;
  // CPUs (Rubick §5): each job's input pipeline needs cpu_need threads per capability-1 device,
  // drawn uniformly in [cpu_need_min, cpu_need_max] by hashing (seed, id); 0 = off (CPUs never
  // change speed). Policies that schedule CPUs (Policy::SchedulesCpus) pick each job's CPUs per
  // device in [1, ceil(cpu_need x fastest capability)]; the others hold cpus_per_gpu per device.
  double cpu_need_min = 1.0;
  double cpu_need_max = 0.0;
  int cpus_per_gpu = 0;                   // 0 = the fewest CPUs per device of any node type
  std::int64_t memory_mb_per_gpu = 0;     // host memory every job holds per device
  bool record_timeline = true;
  // --live (live_path.h): nodes of this many devices. A job requesting at least that many has
  // its requested, min and max devices rounded up to whole nodes (elasticd resizes whole
  // nodes); a smaller one runs rigid at its request, sharing a node; 0 = off.
  int whole_node_devices = 0;
};



// One trace job as the replay starts it.
struct PreparedJob {
  policy::JobState state;       // pending; profile, bounds, class, CPUs and memory set
  double work = 0.0;            // reference-GPU-seconds (duration x speedup under the user plan)
  model::Plan user_plan = model::Plan::kDp;
};

struct Workload {
  std::vector<PreparedJob> jobs;           // trace order
  std::map<std::string, int> tenant_quota;  // ClusterState::tenant_quota
};

Result<Workload> PrepareWorkload(const policy::ClusterState& cluster,
                                 const std::vector<TraceJob>& trace, const policy::Policy& policy,
                                 const SimOptions& options);

// Fixed CPUs per device for policies that do not schedule CPUs (SimOptions::cpus_per_gpu).
int FixedCpusPerGpu(const policy::ClusterState& cluster, const SimOptions& options);

// Whether a trace job is in the guaranteed SLA class (SimOptions::guaranteed_fraction).
bool IsGuaranteed(const TraceJob& row, const SimOptions& options);

// Deterministic unit value in [0,1) for a job id and a salt (no seed: classes stay put).
double UnitHash(const std::string& job_id, std::uint64_t salt);

// Per-job comm_ratio for this seed (FNV-1a of the id mixed with the seed; platform-independent).
double CommRatioFor(const std::string& job_id, const SimOptions& options);

}  // namespace elastic::sim
