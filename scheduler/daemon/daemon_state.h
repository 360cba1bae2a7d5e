// What elasticd knows and reports: its registry of elastic jobs, their orders in flight and
// recent decisions. Plain data, owned by the daemon's single event-loop thread; saved to
// state_dir after every change (registry_store.h) so a restart disturbs no job.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/messages.h"  // Decision, as `status` shows it
#include "protocol/resize_order.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::daemon {

struct JobRecord {
  std::uint32_t job_id = 0;
  uid_t uid = 0;
  std::vector<std::string> nodes;  // current node set (from Slurm, confirmed by the supervisor)
  int min_nodes = 0;
  int max_nodes = 0;
  bool bounds_known = false;       // from the job_submit.lua record in AdminComment
  int ests = 0;
  std::uint64_t generation = 1;
  std::uint64_t last_order_generation = 0;  // orders only ever count up, even after a failure
  std::string plan = "auto";         // the plan the job asked for (register)
  // The plan word its current step runs, as the supervisor's polls report it (docs/plans.md:
  // the supervisor re-chooses it on every launch); "" until reported. Not saved: the next poll
  // after an elasticd restart reports it again.
  std::string running_plan;
  double predicted_samples_per_s = 0.0;  // the model's prediction for running_plan (0 = none)
  // Its sensitivity curve (Rubick §5.2): samples/s at 1, 2, ... nodes, which the live policy
  // reads instead of its speedup model; empty until reported. Not saved either.
  std::vector<double> speed_curve;
  // As job_submit.lua recorded it in the AdminComment at submission (the register request's
  // class only for a job without that record, which elasticd never resizes).
  std::string sla_class = "best-effort";
  // A guaranteed job's quota standing from the latest cycle: "within", "over"; "" otherwise.
  // Not saved: the next cycle computes it again.
  std::string quota;
  std::optional<ResizeOrder> order;  // in flight (design.md §3)
  std::string supervisor_state = "running";
  std::string detail;              // the supervisor's last note
  std::int64_t registered_unix = 0;
  std::int64_t last_seen_unix = 0;
  std::int64_t last_resize_unix = 0;  // 0 = never
  int resizes = 0;
  double last_pause_s = 0.0;       // order received -> first step on the new node set
  std::uint64_t last_pause_generation = 0;  // the generation last_pause_s was measured for
  bool comment_dirty = true;       // AdminComment must be rewritten
  // Devices its nodes hold (policy::SlurmNode::devices: GPUs, 1 on a CPU node), counted from
  // each cycle's view; 0 until the first. Not saved: the next cycle counts them again.
  int devices = 0;
  int node_count() const { return static_cast<int>(nodes.size()); }
};

// A job elasticd requeued to grow it (policy::ResizeProposal::via_requeue), until it lets the
// job start again on `nodes` nodes (regrow.h). Not saved: after an elasticd restart the
// job starts by itself once Slurm's requeue delay has passed.
struct Regrow {
  int nodes = 0;
  std::int64_t requeued_unix = 0;
};

struct DaemonState {
  std::string version;
  std::string policy;
  std::int64_t started_unix = 0;
  std::set<uid_t> admin_uids{0};  // root, plus SlurmUser once known
  std::vector<JobRecord> jobs;    // sorted by job id
  std::deque<Decision> recent;    // newest last, bounded by kMaxRecentDecisions
  std::optional<policy::SlurmView> last_view;  // the latest cycle's view (not saved)
  std::map<std::uint32_t, Regrow> regrows;     // by job id (not saved)
  // Jobs StartRegrownJobs started on a node count of elasticd's, until Slurm shows them running
  // (by job id: when; not saved): RestoreNodeRanges leaves their record alone meanwhile.
  std::map<std::uint32_t, std::int64_t> regrow_started;
  // Each job's Slurm restart count whose node range RestoreNodeRanges gave back (once per
  // requeue; not saved: after a restart elasticd gives a range back at most once more).
  std::map<std::uint32_t, int> ranges_restored;
  bool dirty = false;  // the registry changed since it was last saved
  std::uint64_t decisions_total = 0;  // decisions ever recorded (the log keeps the newest)
  static constexpr std::size_t kMaxRecentDecisions = 100;

  JobRecord* Find(std::uint32_t job_id);
  void Record(std::int64_t now, std::uint32_t job_id, std::string action, std::string reason);
};

}  // namespace elastic::daemon
