// elasticd's per-cycle decision on a live Slurm cluster (design.md §3 step 1), pure: which elastic
// job shrinks so that a waiting job can start, and which elastic jobs grow or shrink among the
// nodes that Slurm's own plan does not need. Input is the SlurmView plus elasticd's registry;
// output is resize orders with reasons. No Slurm, clocks or I/O, so the daemon, the tests and
// benchmarks drive it alike.
//
// One cycle, per partition:
//  0. Waiting elastic jobs that have waited `nice_lift` times their time limit behind the rigid
//     queue get job_submit.lua's nice taken back (nice_lift.h); Slurm reorders them from its
//     next pass, so steps 1 and 2 still see this cycle's order.
//  1. Waiting jobs (pending with reason Resources or Priority), guaranteed jobs within their
//     account's quota first (sla_quota.h), each group in Slurm's priority order: a job
//     whose minimum fits the idle nodes left claims them (Slurm starts it on its next pass; nobody
//     grows into them). Otherwise, if idle nodes plus the elastic jobs' nodes above their MIN
//     cover it, those elastic jobs shrink — least loss of speedup per released node first (the
//     speedup of the devices the job keeps: SlurmNode::devices, GPUs or 1 on a CPU node), never
//     below MIN, never the batch host, preferring nodes of the waiting job's planned set
//     (`sched_nodes`) — and the freed nodes are claimed for it. Giving back is never held up by
//     the job's own resize interval or penalty budget: it serves someone else's planned start.
//     A guaranteed job within quota that idle and released nodes cannot start, and that is
//     the job Slurm starts next in its partition (highest priority of those waiting: nodes freed
//     for a job further back would go to the ones ahead of it), preempts best-effort elastic
//     jobs (preempt_best_effort): each preempted job gives back all its
//     nodes (elasticd requeues it; it resumes from its checkpoint when it runs again), chosen so
//     that the fewest jobs go — the smallest that completes the need, else the largest — with
//     the other jobs shrinking for the rest as above. Guaranteed jobs are never preempted. A
//     guaranteed job within quota that cannot start even so keeps the idle nodes it would use
//     free of best-effort growth.
//     This step is the same whatever the policy: Slurm starts jobs, elasticd only makes room.
//  2. The remaining elastic jobs and the idle nodes that no waiting job claimed, that no pending
//     job's planned start (`sched_nodes`) and no reservation active within
//     `reservation_horizon_s` covers. elasticd (DecideResizes with a Policy) hands them to its
//     configured scheduling Policy — the same MakePolicy objects elastic-sim replays traces with
//     — through the pure adapter in live_policy.h (each node with its devices, resized whole;
//     jobs the interval or the penalty rule hold are shown rigid; pending jobs are not shown; no
//     preemption), and
//     turns its kResize decisions back into pure grow / shrink orders: easyscale grows by the
//     largest speedup gain per added node (EasyScale §3.5, sizes 1, 2, 4, ... up to E, never
//     shrinks); rubick grows by slope and may shrink the lowest-slope job above its MIN for a
//     steeper one (Rubick Algorithm 1, §5.2-5.3); elastic as rubick, slopes weighted by
//     remaining work as heSRPT does (Slurm's time limit; none: a year). Without a Policy (the
//     3-argument DecideResizes: benchmarks, tests) step 2 is the original greedy rule:
//     EasyScale's §3.5 greedy with every size up to what is free proposed, its gain the speedup
//     of the devices on those nodes per node added (non-divisor sizes of E that bring no speedup
//     are skipped).
//     Either way a resize also needs the minimum interval since the job's last resize and
//     Rubick's penalty rule (T - N*delta)/T >= threshold (§5.3; T = time since start, N =
//     resizes including this one, delta = resize cost).
// A job on GPU nodes that holds GPUs as gres (SlurmJob::gpus) grows by a requeue
// (ResizeProposal::via_requeue): Slurm 22.05 does not merge an expansion into a job with
// allocated GRES. It is held back (with the reason, as by the interval) while a waiting job could
// start on the nodes it would give back meanwhile, and when it cannot be requeued. One holding
// part of its nodes' GPUs shares them (cons_tres) and never grows; it may still give nodes back
// in step 1. Jobs with an order in flight take no part. Thread-safety: pure function of its
// arguments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/policy/live_policy.h"
#include "scheduler/policy/nice_lift.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

// An elastic job as elasticd's registry knows it (sizes in nodes; its devices are those of its
// nodes in the SlurmView, one training rank each).
struct ElasticJob {
  std::uint32_t job_id = 0;
  int min_nodes = 1;
  int max_nodes = 1;
  int ests = 1;
  bool busy = false;                 // an order is in flight: not considered this cycle
  // The in-flight order's node changes: released nodes count as free for waiting jobs (no second
  // job shrinks for the same need), added ones are off limits to everyone else.
  std::vector<std::string> releasing;
  std::vector<std::string> adding;
  std::int64_t last_resize = 0;      // unix seconds; 0 = never resized
  int resizes = 0;                   // Rubick's N so far
  // The job's resource-sensitivity curve (Rubick §5.2, Fig. 6) as its supervisor reports it:
  // samples/s with 1, 2, ... nodes under the best plan for each; empty = the speedup model.
  std::vector<double> speed_curve;
};

struct ResizeDecisionOptions {
  std::int64_t min_resize_interval_s = 60;
  double reconfig_penalty = 0.97;  // Rubick §5.3 threshold
  double resize_cost_s = 3.0;      // Rubick's delta: one checkpoint-resize-relaunch pause
  // Reservations starting within this many seconds keep their nodes free of growth.
  std::int64_t reservation_horizon_s = 3600;
  // Communication share of a step (model::JobProfile::comm_ratio) the speedup model assumes.
  double comm_ratio = 0.02;
  // Devices per Slurm account for guaranteed jobs (elasticd.toml [quotas], sla_quota.h);
  // nullopt: no table, every guaranteed job is within quota.
  std::optional<std::map<std::string, int>> quotas;
  // Step 1 may preempt best-effort elastic jobs for a guaranteed job within quota that shrinking
  // alone cannot start (elasticd.toml [scheduler] preemption).
  bool preempt_best_effort = true;
  // With preempt_best_effort, also for a rigid job (SlurmJob::elastic false) that Slurm starts
  // next and that shrinking alone cannot start: elastic best-effort jobs use what the rigid queue
  // leaves and give it back (elasticd.toml [scheduler] preempt_for_rigid). Such a victim must have
  // held its nodes for min_resize_interval_s, so that no job is requeued again and again.
  bool preempt_for_rigid = true;
  // Capability per node type (elasticd.toml [node_types], node_types.h) for the Policy of step 2.
  std::map<std::string, double> node_types;
  // Step 0: waiting elastic jobs whose job_submit.lua nice has lasted long enough (nice_lift.h;
  // elasticd.toml [scheduler] elastic_nice, nice_lift_after).
  NiceLiftOptions nice_lift;
};

enum class ResizeKind { kGrow, kShrink };

struct ResizeProposal {
  std::uint32_t job_id = 0;
  ResizeKind kind = ResizeKind::kGrow;
  int from_nodes = 0;
  int to_nodes = 0;
  std::vector<std::string> target_nodes;  // the job's whole node set after the resize, sorted
  std::vector<std::string> changed_nodes;  // grow: nodes added; shrink: nodes released
  std::string reason;
  // A grow of a job holding GPUs as gres (GrowsViaRequeue): not by an expansion job, which Slurm
  // 22.05 refuses to merge, but by a requeue (its agents checkpoint on SIGTERM) after which
  // elasticd lets it start again at once on to_nodes nodes (docs/gpu.md).
  bool via_requeue = false;
};

// A job the decision would have resized but held back, and why (for `elasticd status`).
struct HeldBack {
  std::uint32_t job_id = 0;
  std::string reason;
};

// A best-effort elastic job to requeue so that a guaranteed job can start (Rubick §5: "shrinking
// a job to 0 results in a preemption"); it gives back every node, its batch host included.
struct Preemption {
  std::uint32_t job_id = 0;
  std::vector<std::string> nodes;  // all it holds, sorted
  std::string reason;
};

struct ResizeDecision {
  std::vector<ResizeProposal> proposals;
  std::vector<HeldBack> held_back;
  std::vector<Preemption> preemptions;
  std::vector<NiceLift> nice_lifts;  // step 0 (nice_lift.h)
};

// REQUIRES: every ElasticJob's id names a running job in `view` (others are ignored).
ResizeDecision DecideResizes(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                             const ResizeDecisionOptions& options);
// The adapter's options for these decision options; MakePolicy(name, LivePolicyOptions(that))
// builds the Policy elasticd runs.
LiveOptions LiveOptionsFrom(const ResizeDecisionOptions& options);
// Step 2 decided by `policy` (what elasticd runs; see above and live_policy.h).
ResizeDecision DecideResizes(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                             const ResizeDecisionOptions& options, const Policy& policy);

// Speedup of an E-EST job with `devices` devices on `nodes` nodes (EasyScale Eq. 1 with one
// worker per device, plus the ring all-reduce term of the throughput model, inter-node once it
// spans nodes); the greedy grow ranks gains of this per node added, step 1 losses per node
// released. 0 for no devices or nodes.
double DeviceSpeedup(int ests, int devices, int nodes, double comm_ratio);
// DeviceSpeedup on one-device (CPU) nodes: `nodes` devices on `nodes` nodes.
double NodeSpeedup(int ests, int nodes, double comm_ratio);

}  // namespace elastic::policy
