// RunCycle: reconcile, proposal, issue orders.
#include "scheduler/daemon/daemon_cycle.h"

#include <algorithm>
#include <map>

#include "scheduler/daemon/admin_comment.h"
#include "scheduler/daemon/background_cycle.h"
#include "scheduler/daemon/order_builder.h"
#include "scheduler/daemon/regrow.h"
#include "scheduler/policy/policy.h"
#include "scheduler/policy/sla_quota.h"

namespace elastic::daemon {
namespace {

void Reconcile(DaemonState& state, const std::map<std::uint32_t, const policy::SlurmJob*>& slurm,
               const CycleOptions& options, std::int64_t now) {
  std::vector<JobRecord> kept;
  for (JobRecord& job : state.jobs) {
    auto it = slurm.find(job.job_id);
    if (it == slurm.end() || it->second->state != policy::SlurmJobState::kRunning) {
      state.Record(now, job.job_id, "dropped", "the job is no longer running in Slurm");
      state.dirty = true;
      continue;
    }
    if (!job.order && job.nodes != it->second->nodes) {
      job.nodes = it->second->nodes;  // Slurm is the truth about what the job holds
      job.comment_dirty = true;
      state.dirty = true;
    }
    if (job.order && now - job.order->issued_unix > options.order_timeout_s) {
      state.Record(now, job.job_id, "failed",
                   "order generation " + std::to_string(job.order->generation) +
                       " expired: the supervisor did not carry it out in " +
                       std::to_string(options.order_timeout_s) + " s");
      job.order.reset();
      job.last_resize_unix = now;
      state.dirty = true;
    }
    kept.push_back(std::move(job));
  }
  state.jobs = std::move(kept);
}

std::vector<policy::ElasticJob> DecisionJobs(const DaemonState& state) {
  std::vector<policy::ElasticJob> jobs;
  for (const JobRecord& job : state.jobs) {
    if (!job.bounds_known) continue;  // unknown bounds: the job keeps its size
    policy::ElasticJob e;
    e.job_id = job.job_id;
    e.min_nodes = job.min_nodes;
    e.max_nodes = job.max_nodes;
    e.ests = job.ests;
    e.speed_curve = job.speed_curve;
    e.busy = job.order.has_value() || job.supervisor_state != "running" ||
             state.regrows.contains(job.job_id);  // requeued to grow, still shown running
    if (job.order) (job.order->grow ? e.adding : e.releasing) = job.order->changed_nodes;
    e.last_resize = job.last_resize_unix;
    e.resizes = job.resizes;
    jobs.push_back(std::move(e));
  }
  return jobs;
}

// Each job's devices from this cycle's view (a node the view lacks counts as one); a change the
// AdminComment shows rewrites it.
void CountDevices(DaemonState& state, const policy::SlurmView& view) {
  std::map<std::string, int> per_node;
  for (const policy::SlurmNode& node : view.nodes) per_node[node.name] = std::max(node.devices, 1);
  for (JobRecord& job : state.jobs) {
    int devices = 0;
    for (const std::string& name : job.nodes) {
      auto it = per_node.find(name);
      devices += it == per_node.end() ? 1 : it->second;
    }
    const int shown = ShownDevices(job);
    job.devices = devices;
    if (ShownDevices(job) != shown) job.comment_dirty = true;
  }
}

// Each guaranteed job's quota standing as its AdminComment shows it ("within" / "over"; "" for
// the other classes); a change rewrites the comment.
void MarkQuotaStanding(DaemonState& state, const policy::SlurmView& view,
                       const CycleOptions& options) {
  std::map<std::uint32_t, int> min_nodes;
  for (const JobRecord& job : state.jobs) min_nodes[job.job_id] = job.min_nodes;
  const std::map<std::uint32_t, bool> standing =
      policy::QuotaStanding(view, min_nodes, options.decision.quotas);
  for (JobRecord& job : state.jobs) {
    auto it = standing.find(job.job_id);
    const std::string quota = it == standing.end() ? "" : it->second ? "within" : "over";
    if (quota != job.quota) job.comment_dirty = true;
    job.quota = quota;
  }
}

// A preempted job leaves the registry's decisions: it is requeued this cycle and registers again
// when it runs.
void RecordPreemption(DaemonState& state, const policy::Preemption& preemption,
                      std::int64_t now) {
  state.Record(now, preemption.job_id, "preempt",
               std::to_string(preemption.nodes.size()) + " nodes, requeued: " +
                   preemption.reason);
}

// Logs a held-back grow only when its reason changes, so the decision log is not flooded.
void RecordHeldBack(DaemonState& state, const policy::HeldBack& held, std::int64_t now) {
  for (auto it = state.recent.rbegin(); it != state.recent.rend(); ++it) {
    if (it->job_id != held.job_id) continue;
    if (it->action == "held" && it->reason.substr(0, 30) == held.reason.substr(0, 30)) return;
    break;
  }
  state.Record(now, held.job_id, "held", held.reason);
}

// The decision carried out: orders to supervisors, grows by requeue, held-back grows,
// preemptions and nice lifts recorded; the requeues and nice writes go to the daemon in `result`.
void Carry(DaemonState& state, policy::ResizeDecision decision, std::int64_t now,
           CycleResult& result) {
  for (const policy::ResizeProposal& order : decision.proposals) {
    if (order.via_requeue) {
      RequeueToGrow(state, order, now, result);
    } else if (JobRecord* job = state.Find(order.job_id)) {
      IssueOrder(state, *job, order, now);
    }
  }
  for (const policy::HeldBack& held : decision.held_back) RecordHeldBack(state, held, now);
  for (const policy::Preemption& preemption : decision.preemptions) {
    RecordPreemption(state, preemption, now);
  }
  result.preemptions = std::move(decision.preemptions);
  for (const policy::NiceLift& lift : decision.nice_lifts) {
    state.Record(now, lift.job_id, "nice",
                 "Nice=" + std::to_string(lift.nice) + ": " + lift.reason);
  }
  result.nice_lifts = std::move(decision.nice_lifts);
}

}  // namespace

CycleResult RunCycle(DaemonState& state, const policy::SlurmView& view,
                     const CycleOptions& options) {
  const std::int64_t now = view.now;
  std::map<std::uint32_t, const policy::SlurmJob*> slurm;
  CycleResult result;
  for (const policy::SlurmJob& job : view.jobs) slurm[job.job_id] = &job;
  Reconcile(state, slurm, options, now);
  RestoreNodeRanges(state, slurm, now, result);
  StartRegrownJobs(state, slurm, now, result);
  state.last_view = view;
  Result<std::unique_ptr<policy::Policy>> configured;
  if (options.resize && !options.policy.empty()) {
    configured = policy::MakePolicy(
        options.policy, policy::LivePolicyOptions(policy::LiveOptionsFrom(options.decision)));
  }
  // A policy that does not resize (backfill, rubick-n) or a name MakePolicy refuses (the
  // config loader accepts only valid ones): observe and report only.
  const bool resize = options.resize &&
                      (options.policy.empty() || (configured && (*configured)->WantsElasticJobs()));
  if (resize) {
    std::vector<policy::ElasticJob> jobs = DecisionJobs(state);
    // Background jobs keep their size: the background step places and requeues them.
    std::erase_if(jobs, [&](const policy::ElasticJob& job) {
      return InBackgroundPartition(view, job.job_id, options.background);
    });
    // Nor does a waiting background job make a foreground job shrink for it.
    policy::SlurmView decision_view = options.background.partition.empty()
                                          ? view
                                          : WithoutPendingBackground(view, options.background);
    if (!state.regrows.empty()) decision_view = WithRegrowsWaiting(decision_view, state.regrows);
    Carry(state,
          configured ? policy::DecideResizes(decision_view, jobs, options.decision, **configured)
                     : policy::DecideResizes(decision_view, jobs, options.decision),
          now, result);
  }
  // After this cycle's orders, so nodes a new shrink releases already count as left.
  if (!options.background.partition.empty()) {
    policy::BackgroundPlan bg =
        policy::PlanBackground(view, ForegroundJobs(state, view, options.background),
                               options.background);
    if (bg.partition_changed) result.background_partition_nodes = std::move(bg.partition_nodes);
    result.background_give_way = std::move(bg.give_way);
  }
  CountDevices(state, view);
  MarkQuotaStanding(state, view, options);
  for (JobRecord& job : state.jobs) {
    if (!job.comment_dirty) continue;
    result.admin_comments.emplace_back(job.job_id, FormatAdminComment(job));
    job.comment_dirty = false;
  }
  return result;
}

}  // namespace elastic::daemon
