// Discrete-event trace replay: the simulator owns time and calls a policy at every event.
//
// Events are job arrivals and completions (plus the end of resize pauses, which only change
// rates). After applying each event the policy is asked for decisions, which the simulator
// validates before applying: no node's devices, CPUs or host memory over-allocated, sizes and
// CPUs per device within the job's bounds, start only pending, resize only running, preempt only
// running elastic best-effort jobs. A preempted job gives back its allocation and waits in the
// queue again with its progress (it resumes from its checkpoint); when it starts again it pays
// resize_cost_s, like a resize; its JCT counts the whole time from submission. workload.h
// turns trace rows into jobs. Work model: a trace job's work is duration_s x its speedup at the
// recorded GPU count packed on reference nodes; it then progresses at model::Speedup of whatever
// it holds and stops for resize_cost_s after every resize. Deterministic: same inputs and seed,
// same result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/sim/trace.h"
#include "scheduler/sim/workload.h"

namespace elastic::sim {

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
  int preemptions = 0;  // times it was preempted back to the queue (DecisionKind::kPreempt)
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
  // The same between the first and the last submission (while load arrives; the drain of the
  // longest jobs after the last submission does not count).
  double gpu_utilization_submission = 0.0;
  // The same, counted only while at least one submitted job waits to start.
  double gpu_utilization_queued = 0.0;
  double queued_s = 0.0;         // time with at least one submitted job waiting
  double cpu_utilization = 0.0;  // CPU-seconds held / (total CPUs x makespan)
  double avg_queue_s = 0.0;      // first start - submit
  long events = 0;
  long policy_calls = 0;
  long preemptions = 0;          // over all jobs
  long preempted_jobs = 0;       // jobs preempted at least once
  long max_used_devices = 0;     // peak devices held at once (never above total_devices)
  double max_used_cpus_per_node_share = 0.0;  // peak CPUs held / CPUs on any node (<= 1)
};

SimResult Simulate(const policy::ClusterState& cluster, const std::vector<TraceJob>& trace,
                   const policy::Policy& policy, const SimOptions& options = {});

}  // namespace elastic::sim
