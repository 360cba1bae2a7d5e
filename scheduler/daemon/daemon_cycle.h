// One elasticd cycle over a fresh Slurm view, pure: reconcile the registry with Slurm (drop jobs
// that ended, take node sets from Slurm, expire orders a silent supervisor never carried out);
// start regrown jobs and give requeued elastic jobs their node range back (regrow.h); run the
// resize decision over the jobs free to move (preempting best-effort jobs where a guaranteed one
// within quota needs it; a job holding GPUs as gres grows by a requeue) — step 1 (room for
// waiting jobs) its own, step 2 decided by the configured scheduling Policy (MakePolicy(policy),
// the objects elastic-sim runs, through policy/live_policy.h); issue its orders; and say which
// AdminComments to rewrite (with each guaranteed job's quota standing, sla_quota.h). The daemon
// does the I/O around it (daemon.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/daemon/daemon_state.h"
#include "scheduler/policy/background_placement.h"
#include "scheduler/policy/resize_decision.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::daemon {

struct CycleOptions {
  policy::ResizeDecisionOptions decision;
  std::int64_t order_timeout_s = 300;  // an order not carried out by then is dropped
  bool resize = true;                  // false: observe and report only
  // [scheduler] policy: "easyscale", "rubick", "elastic" decide step 2 (resize_decision.h);
  // "backfill" (a policy that does not want elastic jobs) resizes nothing; "" runs the
  // decision's own greedy step 2 (kept for tests and benchmarks; elasticd always sets it).
  std::string policy;
  // [background]: --elastic-class=background placement (background_cycle.h); partition "" = off.
  policy::BackgroundOptions background;
};

// A pending job's Slurm record given back the node range job_submit.lua recorded (regrow.h).
struct RangeRestore {
  std::uint32_t job_id = 0;
  int min_nodes = 0;
  int max_nodes = 0;
  bool operator==(const RangeRestore&) const = default;
};

struct CycleResult {
  std::vector<std::pair<std::uint32_t, std::string>> admin_comments;  // job id, new text
  // Background placement: the background partition's new Nodes= (only when it changes) and the
  // background jobs to requeue, most urgent first (policy/background_placement.h).
  std::optional<std::vector<std::string>> background_partition_nodes;
  std::vector<policy::GiveWay> background_give_way;
  // Best-effort elastic jobs to requeue for a guaranteed job (resize_decision.h step 1).
  std::vector<policy::Preemption> preemptions;
  // Waiting elastic jobs given back job_submit.lua's nice (resize_decision.h step 0).
  std::vector<policy::NiceLift> nice_lifts;
  // Grows by requeue (policy::ResizeProposal::via_requeue): jobs to requeue now, and jobs
  // requeued earlier that Slurm shows pending, to start at once on this many nodes.
  std::vector<std::uint32_t> regrow_requeues;
  std::vector<std::pair<std::uint32_t, int>> regrow_starts;
  std::vector<RangeRestore> range_restores;  // requeued elastic jobs' own ranges (regrow.h)
};

// Slurm revokes a requeued job's credential on its nodes, and refuses a launch of it in the same
// second (docs/design.md §3), so a regrown job starts no sooner than this after its requeue.
inline constexpr std::int64_t kRequeueSettleS = 2;
// A regrow not started within this is given up (Slurm's own requeue delay is 120 s, so until
// then the job cannot have started by itself on another node count).
inline constexpr std::int64_t kRegrowTimeoutS = 60;

CycleResult RunCycle(DaemonState& state, const policy::SlurmView& view,
                     const CycleOptions& options);

}  // namespace elastic::daemon
