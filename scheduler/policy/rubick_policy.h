// `rubick` and `elastic`: Rubick's scheduling policy (Rubick §5, Algorithm 1) and ours on top.
//
// rubick, one Decide call (the paper's Schedule, run at every submission and completion):
//  1. Guaranteed jobs within their tenant's quota first (Algorithm 1 lines 1-3, "privileged").
//     A guaranteed job is owed the speed of its requested devices (the SLA, §5.1); minRes is the
//     fewest devices of a type that reach that speed (faster types need fewer), never more than
//     requested. Quota usage counts minRes. To reach minRes it may shrink any other job above
//     its own minimum, lowest slope first (lines 13-18, case 2: "has yet to reach its minimum").
//     minRes is counted on packed devices, so the claim gets room on the fewest nodes first
//     (ScheduleJob works node by node): jobs there are shrunk, then best-effort ones preempted;
//     and a protected running job slower than owed because it is spread (it started over quota)
//     is moved onto such room (rubick_compact.cc).
//  2. Best-effort and running jobs by slope (line 5, SortBySlope): the job with the highest
//     marginal speedup per device takes devices, from free ones or by shrinking the job with the
//     lowest slope above its minimum (GetLowestSlopeOverMinJob) while that slope is lower
//     (line 17, case 1). Pending jobs start at their minimum. Best-effort jobs queued longer than
//     starvation_threshold_s start first and may shrink others whatever the slopes (§5.2).
//  3. Any resize of a running job (grow or shrink) needs (T - N*delta)/T >= 0.97 (§5.3), T = time
//     since its start, N = its resizes including this one, delta = resize_cost_s.
// Placement (Algorithm 1 lines 10-25, §5.2 "the curves capture ... when jobs become
// distributed"): a grant is placed by the model, in place or re-placed from scratch (a resize
// restarts the job anyway), whichever is faster, and a growth that would not speed the job up is
// refused; after the round, jobs spread over more nodes than needed are re-placed compactly when
// that saves more than the resize costs. Plans: model::Speedup picks the best plan per
// allocation for jobs submitted with Plan::kAuto (the simulator fixes plans for variants that do
// not reconfigure them), so minRes may be below the request when a better plan exists.
// CPUs and host memory (§5: GPU and CPU dimensions, memory from the plan's estimator): a CPU-bound
// job (profile.cpu_need > 0) is placed with CPUs per device chosen among just enough to feed its
// devices, the node type's even share, or one, the fastest that fits (fewest on ties), so CPUs
// shrink when nodes run short and grow back in the consolidation pass when they free up (a resize
// like any other). A job whose best plan is ZeRO-Offload also takes the offloaded states' host
// memory per device. No node's devices, CPUs or memory are ever over-committed (FreeLedger).
// Preemption (§5: "shrinking a job to 0 results in a preemption (possible only for best-effort
// jobs), which will return to the queue"): a protected guaranteed job that cannot reach its
// minRes by shrinking jobs above their minimum preempts elastic best-effort jobs, lowest loss
// per device first (DecisionKind::kPreempt); the job keeps its progress (checkpoint) and waits
// in the queue again. Guaranteed and rigid jobs are never preempted.
// CPUs are reclaimed like devices (Algorithm 1 per resource type, rubick_reclaim.cc): when a
// grant does not fit, or only with fewer CPUs than feed its devices, because running jobs hold
// the CPUs of the nodes with free devices, those jobs give back one CPU per device at a time,
// lowest loss of speed per CPU first, never below their minimum CPUs per device; in case 1 only
// while that loss is below the grant's gain per CPU, in case 2 whatever it is.
// Simplifications, stated: rubick runs a job on one device type; slopes use compact placements
// with the CPUs that would feed the devices; host memory is not reclaimed (jobs hold a fixed
// amount per device, and offload memory comes with the plan).
//
// elastic (ours) = rubick plus three things:
//  - backfill-awareness: rigid jobs are scheduled first in queue order (they may also reclaim
//    elastic devices above minimum); the first rigid job that cannot start gets the EASY
//    reservation `backfill` would compute (reservation.h), in devices, CPUs and host memory: a
//    head device counts on a node only with its CPUs (its fixed count, or the type's even share
//    if the policy chooses them) and memory free beside it. From then on no action in the round
//    may leave fewer such devices free at the reservation than the head needs: every start,
//    growth, shrink, CPU change or preemption is checked against what each job will still hold
//    on each node at the reservation time, using the job's end estimate after the action (a
//    shrink delays an end) (rubick_guard.cc).
//  - shortest remaining work first (options.elastic_shortest_work_first), as heSRPT weighs it:
//    a job's slopes count (elastic jobs with at least its remaining work)^(1/2), so jobs finish
//    in order of remaining work while every job keeps getting devices (Engine::WeighByWork; from
//    the run-time estimates backfill also uses); a best-effort job starves only after
//    waiting elastic_starvation_slowdown x its run time (and at least the threshold). Pending
//    guaranteed jobs claim their tenant's quota in the same order (least remaining work first),
//    starving ones first in queue order (rubick: queue order).
//  - heterogeneous EST placement (EasyScale §3.4): a running job may grow onto another device
//    type; the mixed allocation is priced by model::PlanEsts (Eq. 1a-1d), so faster devices host
//    more ESTs instead of the slowest device bounding the job. A guaranteed job preempts only
//    when no device type gives it minRes from free devices and jobs above their minimum
//    (rubick, one type at a time fastest first, preempts on the fastest type even when a
//    slower one has the devices free).
// Thread-safety: Decide is const and uses only its arguments.
#pragma once

#include "scheduler/policy/policy.h"

namespace elastic::policy {

// Rubick's break-down variants (Rubick §7.3, Table 4). Resources: jobs are elastic (grow,
// shrink, minRes); plans: each allocation runs the fastest plan that fits (model::Plan::kAuto).
// Without resources jobs are rigid at their request; without plans they keep the plan they were
// submitted with. The scheduling policy itself (quotas, SLA order, slopes, starvation) stays.
enum class RubickVariant { kFull, kPlansOnly, kResourcesOnly, kNeither };

class RubickPolicy : public Policy {
 public:
  explicit RubickPolicy(const PolicyOptions& options, bool backfill_aware = false,
                        RubickVariant variant = RubickVariant::kFull)
      : options_(options), backfill_aware_(backfill_aware), variant_(variant) {}
  std::string_view Name() const override;
  bool WantsElasticJobs() const override {
    return variant_ == RubickVariant::kFull || variant_ == RubickVariant::kResourcesOnly;
  }
  bool GrowsBeyondRequest() const override { return WantsElasticJobs(); }
  // CPUs are a resource like devices: reallocated by the variants that reallocate resources.
  bool SchedulesCpus() const override { return WantsElasticJobs(); }
  bool ReconfiguresPlans() const override {
    return variant_ == RubickVariant::kFull || variant_ == RubickVariant::kPlansOnly;
  }
  PolicyOutput Decide(const ClusterState& cluster, const std::vector<JobState>& jobs,
                      double now_s) const override;

 private:
  PolicyOptions options_;
  bool backfill_aware_;
  RubickVariant variant_;
};

// Ours, the default: Rubick plus EASY backfill-awareness for rigid jobs (see above).
class ElasticPolicy final : public RubickPolicy {
 public:
  explicit ElasticPolicy(const PolicyOptions& options) : RubickPolicy(options, true) {}
};

// The speed a guaranteed job is owed (Rubick §5.1): its requested devices packed on reference
// nodes, with the plan it was submitted with.
double OwedSpeedup(const JobState& job, const PolicyOptions& options,
                   const model::Environment& env);

// Fewest devices of `device_type` (capability, nodes of devices_per_node) that give `job` at
// least the speed of its requested devices on reference nodes (Rubick's minRes); requested if
// none does; rigid jobs: requested.
int MinResDevices(const JobState& job, double capability, int devices_per_node,
                  const PolicyOptions& options, const model::Environment& env);

}  // namespace elastic::policy
