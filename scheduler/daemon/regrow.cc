// Growth by requeue: requeue, start on the new node count, the node range given back.
#include "scheduler/daemon/regrow.h"

#include <optional>
#include <string>

#include "protocol/node_bounds.h"

namespace elastic::daemon {

void StartRegrownJobs(DaemonState& state, const SlurmJobsById& slurm, std::int64_t now,
                      CycleResult& result) {
  for (auto it = state.regrows.begin(); it != state.regrows.end();) {
    const auto job = slurm.find(it->first);
    const bool pending =
        job != slurm.end() && job->second->state == policy::SlurmJobState::kPending;
    const std::int64_t age = now - it->second.requeued_unix;
    if (pending && age >= kRequeueSettleS) {
      result.regrow_starts.emplace_back(it->first, it->second.nodes);
      state.regrow_started[it->first] = now;
      state.Record(now, it->first, "regrow",
                   "requeued " + std::to_string(age) + " s ago: starts now on " +
                       std::to_string(it->second.nodes) + " nodes");
    } else if (job == slurm.end() || age > kRegrowTimeoutS) {
      state.Record(now, it->first, "failed",
                   "grow by requeue given up: the job was not pending within " +
                       std::to_string(kRegrowTimeoutS) + " s");
    } else {
      ++it;
      continue;
    }
    it = state.regrows.erase(it);
  }
}

policy::SlurmView WithRegrowsWaiting(policy::SlurmView view,
                                     const std::map<std::uint32_t, Regrow>& regrows) {
  for (policy::SlurmJob& job : view.jobs) {
    auto it = regrows.find(job.job_id);
    if (it == regrows.end() || job.state != policy::SlurmJobState::kPending) continue;
    job.reason = "Resources";
    job.min_nodes = it->second.nodes;
  }
  return view;
}

// Its record leaves the registry once Slurm shows it pending (Reconcile).
void RequeueToGrow(DaemonState& state, const policy::ResizeProposal& order, std::int64_t now,
                   CycleResult& result) {
  state.regrows[order.job_id] = {order.to_nodes, now};
  result.regrow_requeues.push_back(order.job_id);
  state.Record(
      now, order.job_id, "grow",
      std::to_string(order.from_nodes) + " -> " + std::to_string(order.to_nodes) +
          " nodes by requeue (it holds GPUs as gres, which Slurm does not merge): " + order.reason);
}

namespace {

// Whether `job`'s record may get its range back now: pending after a requeue, not being regrown,
// and not given back already for this requeue.
bool RangeMayBeRestored(const DaemonState& state, const policy::SlurmJob& job, std::int64_t now) {
  if (job.state != policy::SlurmJobState::kPending || job.restarts == 0 ||
      state.regrows.contains(job.job_id)) {
    return false;
  }
  const auto started = state.regrow_started.find(job.job_id);
  if (started != state.regrow_started.end() && now - started->second <= kRegrowTimeoutS) {
    return false;  // its count is elasticd's until Slurm has run it
  }
  const auto restored = state.ranges_restored.find(job.job_id);
  return restored == state.ranges_restored.end() || restored->second != job.restarts;
}

// Drops what RestoreNodeRanges remembers of jobs that ended or left Slurm, and the regrow starts
// Slurm has run.
void ForgetSettledJobs(DaemonState& state, const SlurmJobsById& slurm) {
  auto gone = [&slurm](std::uint32_t id) {
    const auto it = slurm.find(id);
    return it == slurm.end() || it->second->finished;
  };
  std::erase_if(state.regrow_started, [&](const auto& entry) {
    return gone(entry.first) || slurm.at(entry.first)->state == policy::SlurmJobState::kRunning;
  });
  std::erase_if(state.ranges_restored, [&](const auto& entry) { return gone(entry.first); });
}

}  // namespace

void RestoreNodeRanges(DaemonState& state, const SlurmJobsById& slurm, std::int64_t now,
                       CycleResult& result) {
  ForgetSettledJobs(state, slurm);
  for (const auto& [id, job] : slurm) {
    if (!RangeMayBeRestored(state, *job, now)) continue;
    const std::optional<NodeBounds> bounds = ParseNodeBounds(job->admin_comment);
    if (!bounds) continue;  // not an elastic job (or no job_submit.lua record)
    state.ranges_restored[id] = job->restarts;
    state.regrow_started.erase(id);
    if (job->min_nodes == bounds->min_nodes && job->max_nodes == bounds->max_nodes) continue;
    result.range_restores.push_back({id, bounds->min_nodes, bounds->max_nodes});
    state.Record(now, id, "range",
                 "pending after requeue " + std::to_string(job->restarts) +
                     ": its node count goes back from " + std::to_string(job->min_nodes) +
                     " to its own " + std::to_string(bounds->min_nodes) + "-" +
                     std::to_string(bounds->max_nodes));
  }
}

}  // namespace elastic::daemon
