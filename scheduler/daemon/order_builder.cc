// Issuing resize orders and following them to completion or failure.
#include "scheduler/daemon/order_builder.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace elastic::daemon {

// The one place a ResizeProposal (job J from N to M nodes) becomes the order that goes over
// the wire: numbered, stamped, stripped of what only the decision needs.
void IssueOrder(DaemonState& state, JobRecord& job, const policy::ResizeProposal& proposal,
                std::int64_t now) {
  ResizeOrder order;
  order.generation = std::max(job.generation, job.last_order_generation) + 1;
  order.grow = proposal.kind == policy::ResizeKind::kGrow;
  order.target_nodes = proposal.target_nodes;
  order.changed_nodes = proposal.changed_nodes;
  order.issued_unix = now;
  order.reason = proposal.reason;
  job.last_order_generation = order.generation;
  state.Record(now, job.job_id, order.grow ? "grow" : "shrink",
               std::to_string(proposal.from_nodes) + " -> " + std::to_string(proposal.to_nodes) +
                   " nodes (generation " + std::to_string(order.generation) + "): " +
                   proposal.reason);
  job.order = std::move(order);
  state.dirty = true;
}

bool OrderByHand(DaemonState& state, JobRecord& job, int nodes, std::int64_t now,
                 std::string& error) {
  if (job.order) {
    error = "job " + std::to_string(job.job_id) + " has an order in flight (generation " +
            std::to_string(job.order->generation) + ")";
    return false;
  }
  if (nodes == job.node_count()) {
    error = "job " + std::to_string(job.job_id) + " already has " + std::to_string(nodes) +
            " nodes";
    return false;
  }
  policy::ResizeProposal proposal;
  proposal.job_id = job.job_id;
  proposal.from_nodes = job.node_count();
  proposal.to_nodes = nodes;
  proposal.reason = "ordered by an administrator";
  std::string batch_host, partition;
  std::set<std::string> busy;  // promised to other jobs' grows in flight
  for (const JobRecord& other : state.jobs) {
    if (other.order && other.order->grow) busy.insert(other.order->changed_nodes.begin(),
                                                      other.order->changed_nodes.end());
  }
  if (state.last_view) {
    for (const policy::SlurmJob& s : state.last_view->jobs) {
      if (s.job_id == job.job_id) batch_host = s.batch_host, partition = s.partition;
    }
  }
  if (nodes < job.node_count()) {
    proposal.kind = policy::ResizeKind::kShrink;
    std::vector<std::string> keep;
    if (!batch_host.empty()) keep.push_back(batch_host);
    for (const std::string& n : job.nodes) {
      if (static_cast<int>(keep.size()) < nodes && n != batch_host) keep.push_back(n);
    }
    for (const std::string& n : job.nodes) {
      if (std::find(keep.begin(), keep.end(), n) == keep.end()) proposal.changed_nodes.push_back(n);
    }
    std::sort(keep.begin(), keep.end());
    proposal.target_nodes = keep;
  } else {
    proposal.kind = policy::ResizeKind::kGrow;
    proposal.target_nodes = job.nodes;
    if (state.last_view) {
      for (const policy::SlurmNode& n : state.last_view->nodes) {
        const bool in_partition = std::find(n.partitions.begin(), n.partitions.end(),
                                            partition) != n.partitions.end();
        if (proposal.to_nodes == static_cast<int>(proposal.target_nodes.size())) break;
        if (n.idle() && in_partition && !busy.contains(n.name)) {
          proposal.changed_nodes.push_back(n.name);
          proposal.target_nodes.push_back(n.name);
        }
      }
    }
    if (static_cast<int>(proposal.target_nodes.size()) < nodes) {
      error = "only " + std::to_string(proposal.changed_nodes.size()) +
              " idle node(s) to grow job " + std::to_string(job.job_id) + " by " +
              std::to_string(nodes - job.node_count());
      return false;
    }
    std::sort(proposal.target_nodes.begin(), proposal.target_nodes.end());
  }
  IssueOrder(state, job, proposal, now);
  return true;
}

bool ApplyProgress(JobRecord& job, std::uint64_t generation, std::uint64_t seen,
                   std::int64_t now, DaemonState& state) {
  if (!job.order) return false;
  const ResizeOrder& order = *job.order;
  if (generation >= order.generation) {
    state.Record(now, job.job_id, "resized",
                 std::to_string(job.node_count()) + " -> " +
                     std::to_string(order.target_nodes.size()) + " nodes, generation " +
                     std::to_string(generation) + ": relaunched on the new node set");
    job.nodes = order.target_nodes;
    job.generation = generation;
    job.last_resize_unix = now;
    job.resizes += 1;
    job.comment_dirty = true;
    job.order.reset();
    return true;
  }
  const bool settled = job.supervisor_state == "running" || job.supervisor_state == "failed";
  if (seen >= order.generation && settled) {
    state.Record(now, job.job_id, "failed",
                 "order generation " + std::to_string(order.generation) + " not carried out: " +
                     job.detail);
    job.last_resize_unix = now;  // back off for the min interval before trying again
    job.order.reset();
    return true;
  }
  return false;
}

bool ApplyPause(JobRecord& job, std::uint64_t pause_generation, double pause_s, std::int64_t now,
                DaemonState& state) {
  if (pause_generation <= job.last_pause_generation || pause_generation > job.generation) {
    return false;  // already recorded, or a generation elasticd has not seen carried out
  }
  char text[96];
  std::snprintf(text, sizeof text, "generation %llu: %.2f s (order received -> first step done)",
                static_cast<unsigned long long>(pause_generation), pause_s);
  state.Record(now, job.job_id, "pause", text);
  job.last_pause_s = pause_s;
  job.last_pause_generation = pause_generation;
  return true;
}

}  // namespace elastic::daemon
