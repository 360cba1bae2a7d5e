// The live adapter between elasticd's Slurm world and the scheduling `Policy` (policy.h): the
// same Policy objects the simulator runs (MakePolicy) decide which elastic jobs of a partition
// grow or shrink, and to what size, among the nodes that step 1 of the resize decision
// (resize_decision.h: waiting jobs' claims, planned and reserved nodes) leaves. Pure: no Slurm,
// clocks or I/O; resize_growth.cc drives it, tests drive it directly.
//
// Live model (design.md §3; one training rank per device):
//  - A node is the allocation unit and holds `devices` devices (its GPUs, 1 on a CPU node):
//    every node becomes a NodeState of its device type and capability (node_types.h: its gres
//    GPU type or a configured feature with [node_types]'s capability; "node", 1 otherwise) with
//    that many devices; under rubick and elastic a job runs on one type (no mixed-type growth
//    live: the agent places ESTs by speed only where each node sets ELASTIC_DEVICE_SPEED, else
//    a mixed allocation runs at its slowest device's pace); easyscale may still mix types,
//    priced as if ESTs followed speed;
//    its CPUs come from the Slurm view, host memory is not modelled (0: the whole node is the
//    job's). Nodes the partition's jobs hold are in the cluster with no free device; nodes free
//    for growth (idle, unclaimed, not planned for a pending job, not reserved) have all their
//    devices free. No other node is shown to the policy, so no decision can grow into a planned
//    or reserved node.
//  - Every running, registered elastic job not busy with an order becomes a best-effort elastic
//    JobState holding every device of its nodes: min/max from its bounds record in nodes times
//    its devices per node (its devices over its nodes, rounded up), profile {ests, comm_ratio}
//    (the same speedup curve the decision's greedy rule uses, EasyScale Eq. 1 with one worker per
//    device), or its speed curve (per node count) read as per device (see LiveJob), its start
//    time as submit and start time, its Slurm end time (start + time limit) as expected end, so
//    its remaining work is time left x current speed; a job without a time limit has no end and
//    a year of one device's work left (the same for all such jobs).
//    A job that may not be resized now (minimum interval since its last resize, or Rubick §5.3's
//    penalty (T - N*delta)/T < threshold) is shown rigid at its current size: it holds its nodes
//    and neither grows nor is shrunk for another job's benefit.
//  - Pending jobs are not shown: Slurm starts jobs itself (step 1 makes room for them, serving
//    guaranteed jobs within quota first and preempting best-effort jobs for them, sla_quota.h).
//    So no kStart decisions arise here, and the policy's own preemption is off
//    (PolicyOptions::preempt_best_effort = false): step 1 is where live preemption happens.
// Decisions back to node changes (ToLiveChanges), whole nodes only: a node where the decision
// leaves the job any device is the job's, one where it leaves none is released. On a cluster of
// one-device nodes (CPUs) this is the node-for-device model exactly. A kResize to a larger
// allocation adds only
// the nodes the policy picked that are free for growth now (a node another job gives up in the
// same round is not free until its shrink is carried out: that part of the growth waits for a
// later cycle); a kResize to a smaller one releases the nodes the policy dropped, never the batch
// host (another node is released instead), never below MIN; an equal-size move (Rubick's
// re-placement) is not done live; kStart and kPreempt are ignored. Sizes are clamped to
// [MIN, MAX] defensively. Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/policy/types.h"

namespace elastic::policy {

// One elastic job of a partition as the live cycle sees it. Nodes are named by their index in
// LivePartition::nodes: the cycle that builds a partition already numbers its nodes, and a cycle
// at 10,000 nodes spent a fifth of its time turning names into indices and back.
struct LiveJob {
  std::uint32_t job_id = 0;
  std::vector<int> nodes;  // current node set: indices into LivePartition::nodes, ascending
  int batch_host = -1;     // index of the node never released (-1: none)
  int min_nodes = 1;
  int max_nodes = 1;
  int ests = 1;
  std::int64_t start_time = 0;   // unix seconds
  std::int64_t end_time = 0;     // start + time limit; 0 = no limit
  std::int64_t last_resize = 0;  // 0 = never
  int resizes = 0;
  bool may_resize = true;  // false: held at its size this cycle (interval / penalty)
  // Samples/s at 1, 2, ... nodes (Rubick §5.2's sensitivity curve from the job's performance
  // model); when given, the policy's speedup at n nodes of d devices each is d x curve[n-1] /
  // curve[0] (one device of a node as fast as 1/d of it), linear between whole nodes, flat past
  // the end, instead of EasyScale's Eq. 1 with profile {ests, comm_ratio}. With d = 1 (CPU
  // nodes) that is curve[n-1] / curve[0].
  std::vector<double> speed_curve;
};

struct LiveNode {
  std::string name;
  int cpus = 0;
  int devices = 1;  // GPUs, 1 on a CPU node (policy::SlurmNode::devices)
  std::string device_type = "node";  // node_types.h
  double capability = 1.0;
};

// One partition's step 2: its jobs, the nodes they hold and the nodes free for growth. The
// policy sees nodes[k] as ClusterState node k; where growth may take several free nodes it takes
// them in this order, and a shrink that must pick among nodes picks the last of a job's first.
struct LivePartition {
  std::int64_t now = 0;
  std::vector<LiveJob> jobs;
  std::vector<LiveNode> nodes;  // the nodes the jobs hold (each exactly once) and the free ones
  std::vector<bool> free;       // by index into nodes: free for growth
};

struct LiveOptions {
  double resize_cost_s = 3.0;
  double min_resize_interval_s = 60.0;
  double reconfig_penalty = 0.97;
  double comm_ratio = 0.02;
};

// The PolicyOptions elasticd runs its policy with (preemption off: step 1 preempts; no SLA
// reference node size: the running jobs it sees are shown best-effort, a guaranteed job's
// minimum being its MIN, which the policy never shrinks below).
PolicyOptions LivePolicyOptions(const LiveOptions& options);

struct PolicyInput {
  ClusterState cluster;
  std::vector<JobState> jobs;  // JobState::id = the Slurm job id in decimal
};

PolicyInput ToPolicyInput(const LivePartition& partition, const LiveOptions& options);

// A node-count speed curve as per-device speedups for nodes of `devices_per_node` devices (see
// LiveJob::speed_curve); empty for an empty curve or one whose first point is not positive; cut
// off after whole nodes past 65,536 points (flat past the end, as Speedup reads it).
std::vector<double> DeviceSpeedups(const std::vector<double>& speed_curve, int devices_per_node);

// A job's node change: a pure grow or a pure shrink.
struct LiveChange {
  std::uint32_t job_id = 0;
  std::vector<int> target;  // the job's whole node set afterwards (LivePartition::nodes), ascending
  std::string reason;
};

std::vector<LiveChange> ToLiveChanges(const LivePartition& partition, const PolicyOutput& output,
                                      std::string_view policy_name);

// ToPolicyInput, policy.Decide(now), ToLiveChanges.
std::vector<LiveChange> DecideLive(const Policy& policy, const LivePartition& partition,
                                   const LiveOptions& options);

}  // namespace elastic::policy
