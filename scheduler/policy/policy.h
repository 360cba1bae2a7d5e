// The one scheduling-policy interface, used by elasticd and by elastic-sim (design.md §1).
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

#include "scheduler/policy/types.h"

namespace elastic::policy {

struct PolicyOptions {
  double resize_cost_s = 30.0;            // what a resize costs the job (model::ResizeCost)
  double min_resize_interval_s = 600.0;   // a running job is not resized more often than this
  int top_k_proposals = 3;                // EasyScale: proposals each intra-job planner submits
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view Name() const = 0;
  // Whether jobs should be submitted as elastic (min..max) rather than rigid (requested size).
  virtual bool WantsElasticJobs() const = 0;
  // REQUIRES: cluster free counts already exclude every job's allocation; job ids are unique.
  virtual PolicyOutput Decide(const ClusterState& cluster, const std::vector<JobState>& jobs,
                              double now_s) const = 0;
};

struct PolicyOrError {
  std::unique_ptr<Policy> policy;
  std::string error;  // set when policy is null
};

// "backfill" or "easyscale"; anything else returns an error naming the accepted spellings.
PolicyOrError MakePolicy(std::string_view name, const PolicyOptions& options = {});
std::string_view PolicyChoices();

// Pending jobs in queue order: priority (high first), then submit time, then id.
std::vector<const JobState*> QueueOrder(const std::vector<JobState>& jobs);

}  // namespace elastic::policy
