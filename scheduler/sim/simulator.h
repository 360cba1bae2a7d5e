// Discrete-event trace replay: the simulator owns time and calls a policy at every event.
//
// Events are job arrivals and completions (plus the end of resize pauses, which only change
// rates). After applying each event the policy is asked for decisions, which the simulator
// validates (no over-allocation, sizes within [min,max], start only pending, resize only running)
// before applying. Work model: a trace job's work is duration_s x its speedup at the recorded GPU
// count packed on reference nodes; it then progresses at model::Speedup of whatever it holds and
// stops for resize_cost_s after every resize. Deterministic: same inputs and seed, same result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  bool record_timeline = true;
};

struct JobRecord {
  std::string id;
  double submit_s = 0.0;
  double start_s = -1.0;
  double end_s = -1.0;
  int requested_devices = 0;
  int min_devices = 0;
  int max_devices = 0;
  int peak_devices = 0;
  int resizes = 0;
  double device_seconds = 0.0;
  double first_reservation_s = policy::kNever;  // earliest reservation a policy gave it
  bool rigid = false;
  bool guaranteed = false;
  std::string plan;  // the plan the user submitted (model::PlanName)
  std::string tenant;
};

struct Segment {  // job `job` held `devices` devices during [from_s, to_s)
  size_t job = 0;
  double from_s = 0.0;
  double to_s = 0.0;
  int devices = 0;
};

struct SimResult {
  std::string error;  // set when the replay was aborted (invalid decision, unplaceable job)
  std::string policy;
  int total_devices = 0;
  std::vector<JobRecord> jobs;  // trace order
  std::vector<Segment> timeline;
  double avg_jct_s = 0.0;
  double p99_jct_s = 0.0;
  double makespan_s = 0.0;
  double gpu_utilization = 0.0;  // device-seconds held / (total devices x makespan)
  double avg_queue_s = 0.0;      // first start - submit
  long events = 0;
  long policy_calls = 0;
  long max_used_devices = 0;     // peak devices held at once (never above total_devices)
};

// Deterministic unit value in [0,1) for a job id and a salt (no seed: classes stay put).
double UnitHash(const std::string& job_id, std::uint64_t salt);

// Per-job comm_ratio for this seed (FNV-1a of the id mixed with the seed; platform-independent).
double CommRatioFor(const std::string& job_id, const SimOptions& options);

SimResult Simulate(const policy::ClusterState& cluster, const std::vector<TraceJob>& trace,
                   const policy::Policy& policy, const SimOptions& options = {});

}  // namespace elastic::sim
