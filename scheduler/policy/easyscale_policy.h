// `easyscale`: EasyScale's two-level scheduler (EasyScale §3.4, Figure 8).
//
// Intra-job planner (one per job): proposes scaling out by an increment of homogeneous devices
// (d = 1, 2, 4, ... of one device type, plus exactly what reaches min_devices), estimates the new
// throughput with the waste model (Eq. 1a–1d, model::PlanEsts: the one implementation, which
// `elastic` also uses for jobs spread over device types, so heterogeneous mixes and the integer EST
// quantum are priced in) and submits its top-K proposals by speedup per device. CPUs: each job
// holds the fixed CPUs per device it was submitted with (JobState::cpus_per_device).
// Inter-job scheduler: greedily accepts the proposal with the highest speedup per device, ties to
// more devices (then earlier submission, then id), re-plans that job, and repeats until no
// proposal fits the free devices. A pending job's first proposal gains a whole job's throughput,
// so starting queued jobs beats growing running ones. Like the paper, it never shrinks or preempts.
// Our additions (not in the paper): a running job is not resized within min_resize_interval_s of
// its last resize, and a growth must save more expected time than resize_cost_s.
#pragma once

#include "scheduler/policy/policy.h"

namespace elastic::policy {

class EasyScalePolicy final : public Policy {
 public:
  explicit EasyScalePolicy(const PolicyOptions& options) : options_(options) {}
  std::string_view Name() const override { return "easyscale"; }
  bool WantsElasticJobs() const override { return true; }
  PolicyOutput Decide(const ClusterState& cluster, const std::vector<JobState>& jobs,
                      double now_s) const override;

 private:
  PolicyOptions options_;
};

}  // namespace elastic::policy
