// The simulated Slurm of elastic-sim --live (live_path.h): who holds which devices of each node,
// and Slurm's own starts. Placement is cons_tres's: a job of a node or more (`-N k`, whole
// nodes, as elasticd resizes them) takes idle nodes; a smaller job (`--gres=gpu:d`) shares a node
// with others, on the best-fitting one. Starts are EASY backfill in Slurm's queue order: the
// first job that cannot start is planned on the nodes that free up first (`sched_nodes`), and a
// later job may use those only if it ends before the head's planned start. An elastic job
// (-N MIN-MAX) starts on MIN nodes and, once the queue has been served, takes as many more idle
// unplanned nodes as it may, up to MAX. With etc/job_submit.lua's nice (SlurmSite), elastic jobs
// come after all others in Slurm's queue. Pure; one instance lives within one Decide call.
#pragma once

#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/policy/types.h"

namespace elastic::sim {

// What the site's Slurm does beyond its defaults.
struct SlurmSite {
  // etc/job_submit.lua's ELASTIC_NICE: foreground elastic jobs wait behind every other job.
  bool elastic_jobs_yield = true;
};

class SimSlurm {
 public:
  // `per_node`: devices of every node (one node size, UniformNodeDevices).
  SimSlurm(const policy::ClusterState& cluster, const std::vector<policy::JobState>& jobs,
           int per_node, SlurmSite site = {});

  // Slurm's queue, first first: priority and submission (policy::QueueOrder), then the site's
  // nice. Indices into jobs().
  std::vector<size_t> Queue() const;

  // Slurm's scheduling pass at `now`: starts, the blocked head and its planned nodes.
  void Starts(double now);
  // elasticd's order carried out: job `j` (whole nodes) now holds exactly `nodes`.
  void Resize(size_t j, std::vector<int> nodes, const std::string& reason);
  // elasticd requeued job `j`: it gives back its nodes and waits out this call.
  void Requeue(size_t j, const std::string& reason);
  // elasticd took job_submit.lua's nice back from waiting job `j` (policy/nice_lift.h): from now
  // on it keeps its place in Slurm's queue.
  void LiftNice(size_t j) { lifted_[j] = 1; }
  // Job `j` still waits behind the others under the site's nice.
  bool Yields(size_t j) const;

  // A job of a node or more: holds whole nodes. A smaller one shares a node.
  bool WholeNodes(size_t j) const { return jobs_[j].requested_devices >= per_node_; }
  // Nodes job `j` asks Slurm for: MIN for an elastic job, its request for a rigid one.
  int NodesAsked(size_t j) const;
  int Nodes(int devices) const { return devices / per_node_; }

  const policy::ClusterState& cluster() const { return cluster_; }
  const std::vector<policy::JobState>& jobs() const { return jobs_; }
  int Used(size_t node) const { return used_[node]; }
  bool Planned(size_t node) const { return planned_[node] != 0; }
  bool Requeued(size_t j) const { return requeued_[j] != 0; }
  const std::string& head_id() const { return head_id_; }
  policy::PolicyOutput TakeOutput() { return std::move(out_); }

 private:
  int Free(size_t node) const { return cluster_.nodes[node].devices - used_[node]; }
  bool Usable(size_t node, bool may_use_planned) const {
    return may_use_planned || !planned_[node];
  }
  // Where job `j` could start now (into `picked`); false if it cannot.
  bool Fit(size_t j, bool may_use_planned, policy::Allocation& picked) const;
  bool FitWholeNodes(int nodes, bool may_use_planned, policy::Allocation& picked) const;
  bool FitOnOneNode(int devices, bool may_use_planned, policy::Allocation& picked) const;
  double PlanHead(size_t j, double now);
  double PlanWholeNodes(int nodes, double now);
  double PlanOnOneNode(int devices, double now);
  std::vector<std::vector<std::pair<double, int>>> EndsPerNode(double now) const;
  void Place(size_t j, const policy::Allocation& allocation);
  void TakeMoreUpToMax(size_t j);

  const policy::ClusterState& cluster_;
  int per_node_ = 1;
  SlurmSite site_;
  std::vector<policy::JobState> jobs_;  // the simulator's, updated as decided
  std::vector<int> used_;               // per node: devices held
  std::vector<char> planned_;           // per node: planned for the blocked head
  std::string head_id_;                 // the blocked head, "" when none
  std::vector<char> requeued_;          // per job: preempted in this call (Slurm holds it back)
  std::vector<char> lifted_;            // per job: its elastic nice taken back
  policy::PolicyOutput out_;
};

}  // namespace elastic::sim
