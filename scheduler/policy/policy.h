// The one scheduling-policy interface, used by elasticd and by elastic-sim (design.md §1).
// elastic-sim replays traces through Decide directly. elasticd runs MakePolicy([scheduler]
// policy) every cycle through the pure live adapter (live_policy.h, driven by resize_decision.h):
// after making room for the jobs Slurm has waiting, the policy decides which running elastic
// jobs grow or shrink among the nodes Slurm's plan leaves, each node with its devices (GPUs, 1 on
// a CPU node) and resized whole; its kResize decisions become resize orders (kStart does not
// arise live: Slurm starts jobs; kPreempt is off in the policy live,
// PolicyOptions::preempt_best_effort = false, because the decision's step 1 preempts for waiting
// guaranteed jobs, resize_decision.h).
//
// A policy is a pure function of (cluster state, jobs, now): it returns decisions (start a job on
// these devices, resize a running job to this allocation, each with a reason) and the
// reservations it planned. It never throws for "nothing fits"; it simply decides nothing.
// Policies hold only their options, so Decide is const and safe to call from several threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "scheduler/policy/types.h"

namespace elastic::policy {

struct PolicyOptions {
  double resize_cost_s = 30.0;            // what a resize costs the job (model::ResizeCost)
  double min_resize_interval_s = 600.0;   // a running job is not resized more often than this
  int top_k_proposals = 3;                // EasyScale: proposals each intra-job planner submits
  // Rubick (§5.3): reconfigure only if (T - N*delta)/T stays >= this, T = time since start,
  // N = resizes including the one considered, delta = resize_cost_s.
  double reconfigure_threshold = 0.97;
  // Rubick (§5.2): a best-effort job queued this long may shrink others regardless of slopes.
  double starvation_threshold_s = 3600.0;
  // Devices per node the SLA reference ran on (the trace's nodes): a guaranteed job is owed the
  // speed of `requested_devices` capability-1 devices packed on nodes of this size.
  int reference_devices_per_node = 8;
  // elastic only: rank jobs by slope / remaining work instead of slope (rubick_policy.h).
  bool elastic_shortest_work_first = true;
  // elastic with shortest-work-first: a best-effort job starves (Rubick §5.2) once it has waited
  // max(starvation_threshold_s, this x its expected run time).
  double elastic_starvation_slowdown = 1.0;
  // elastic only: jobs may grow onto other device types, priced by EasyScale Eq. 1.
  bool elastic_mixed_types = true;
  // elastic only: a growth is granted only where its placement gains nearly what it was ranked by
  // (rubick_engine.h, kGrowthPlacementFloor); false grants any gain, as rubick does (ablation).
  bool elastic_compact_growth = true;
  // elastic only: a pending job no SLA protects (best-effort, or guaranteed over its tenant's
  // quota) may preempt best-effort jobs that would still run at least twice as long
  // (rubick_engine.h, kPreemptLongerFactor); false: only protected guaranteed jobs preempt
  // (ablation).
  bool elastic_preempt_longer = true;
  // rubick, elastic: a guaranteed job below its SLA may preempt best-effort jobs (Rubick §5);
  // false keeps every job at or above its minimum (ablation).
  bool preempt_best_effort = true;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view Name() const = 0;
  // Whether jobs should be submitted as elastic (min..max) rather than rigid (requested size).
  virtual bool WantsElasticJobs() const = 0;
  // Whether elastic jobs may grow past their requested size (up to max_devices); EasyScale cannot
  // use more devices than ESTs, Rubick re-plans data parallelism and can.
  virtual bool GrowsBeyondRequest() const { return false; }
  // Whether the policy re-chooses each job's execution plan for its allocation (Rubick's
  // GetBestPlan, model::Plan::kAuto); otherwise jobs keep the plan they were submitted with.
  virtual bool ReconfiguresPlans() const { return false; }
  // Whether the policy chooses each job's CPUs per device (Rubick §5's CPU dimension) between
  // JobState::min_cpus_per_device and max_cpus_per_device; otherwise jobs hold a fixed count.
  virtual bool SchedulesCpus() const { return false; }
  // REQUIRES: cluster free counts already exclude every job's allocation; job ids are unique.
  virtual PolicyOutput Decide(const ClusterState& cluster, const std::vector<JobState>& jobs,
                              double now_s) const = 0;
};

// "backfill", "easyscale", "rubick", "elastic", or Rubick's ablations "rubick-e" (plans only),
// "rubick-r" (resources only), "rubick-n" (neither); anything else returns an error naming the
// accepted spellings. A made policy is never null.
Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                           const PolicyOptions& options = {});
std::string_view PolicyChoices();

// Pending jobs in queue order: priority (high first), then submit time, then id.
std::vector<const JobState*> QueueOrder(const std::vector<JobState>& jobs);

}  // namespace elastic::policy
