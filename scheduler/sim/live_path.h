// elastic-sim --live: a replay of what elasticd does on a Slurm cluster, so that a replay
// predicts the deployed daemon. A Policy adapter that runs, at every simulator event, a simulated
// Slurm around elasticd's own decision code — policy::DecideResizes with the Policy elasticd
// builds (MakePolicy(name, LivePolicyOptions(LiveOptionsFrom(options)))), the same functions,
// not a copy:
//  1. Slurm starts what it can (sim_slurm.h): EASY backfill in Slurm's queue order (with the
//     site's job_submit.lua, elastic jobs after all others: SlurmSite) with cons_tres
//     placement. A job of a node or more holds whole nodes; an elastic one (-N MIN-MAX) starts
//     on its MIN nodes and, as Slurm does for a node range, on as many more idle nodes as are
//     free up to MAX, leaving the nodes planned for the blocked head (`sched_nodes`, those that
//     free up first). A job smaller than a node shares a node with others (best fit).
//  2. elasticd's cycle on the SlurmView of that state: running jobs on their nodes with Slurm's
//     end times (the model's end estimates stand in for time limits), the pending queue
//     (reason Resources for the head, Priority behind it), accounts = tenants, classes and
//     quotas: shrinks and preemptions for waiting jobs, then the Policy's grows and shrinks.
//  3. Slurm starts what the shrinks and preemptions made room for.
// elasticd resizes whole nodes (one training rank per device), and Slurm cannot resize a job's
// devices within a node, so jobs are submitted as SimOptions::whole_node_devices says: one of a
// node or more as a whole-node job (sizes rounded up to whole nodes; elastic unless rigid), a
// smaller one as a rigid job at its request, as a user would submit it beside elastic jobs; the
// cluster must have one node size. Times are the simulator's seconds plus a fixed epoch.
// Thread-safety: Decide is const and uses only its arguments.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "scheduler/policy/policy.h"
#include "scheduler/policy/resize_decision.h"
#include "scheduler/sim/sim_slurm.h"

namespace elastic::sim {

class LivePathPolicy final : public policy::Policy {
 public:
  // `policy`: the [scheduler] policy name elasticd runs ("easyscale", "rubick", "elastic").
  static Result<std::unique_ptr<LivePathPolicy>> Make(const std::string& policy,
                                                      const policy::ResizeDecisionOptions& options,
                                                      SlurmSite site = {});

  std::string_view Name() const override { return name_; }
  bool WantsElasticJobs() const override { return inner_->WantsElasticJobs(); }
  bool GrowsBeyondRequest() const override { return inner_->GrowsBeyondRequest(); }
  policy::PolicyOutput Decide(const policy::ClusterState& cluster,
                              const std::vector<policy::JobState>& jobs,
                              double now_s) const override;

 private:
  LivePathPolicy(std::unique_ptr<policy::Policy> inner, policy::ResizeDecisionOptions options,
                 SlurmSite site);

  std::unique_ptr<policy::Policy> inner_;
  policy::ResizeDecisionOptions options_;
  SlurmSite site_;
  std::string name_;
};

// Devices per node of a cluster whose nodes all have the same count; 0 otherwise.
int UniformNodeDevices(const policy::ClusterState& cluster);

}  // namespace elastic::sim
