// SimSlurm: cons_tres placement and EASY backfill for elastic-sim --live (see sim_slurm.h).
#include "scheduler/sim/sim_slurm.h"

#include <algorithm>

namespace elastic::sim {

using policy::Allocation;
using policy::DecisionKind;
using policy::JobState;
using policy::kNever;

SimSlurm::SimSlurm(const policy::ClusterState& cluster, const std::vector<JobState>& jobs,
                   int per_node, SlurmSite site)
    : cluster_(cluster),
      per_node_(per_node),
      site_(site),
      jobs_(jobs),
      used_(cluster.nodes.size(), 0),
      planned_(cluster.nodes.size(), 0),
      requeued_(jobs.size(), 0),
      lifted_(jobs.size(), 0) {
  for (const JobState& job : jobs_) {
    for (const policy::Slice& slice : job.allocation) used_[slice.node] += slice.devices;
  }
}

// job_submit.lua nices every foreground --elastic job; background ones have their partition.
bool SimSlurm::Yields(size_t j) const {
  return site_.elastic_jobs_yield && jobs_[j].elastic &&
         jobs_[j].sla_class != SlaClass::kBackground && !lifted_[j];
}

std::vector<size_t> SimSlurm::Queue() const {
  std::vector<size_t> queue;
  for (const JobState* job : policy::QueueOrder(jobs_)) {
    queue.push_back(static_cast<size_t>(job - jobs_.data()));
  }
  std::stable_partition(queue.begin(), queue.end(), [&](size_t j) { return !Yields(j); });
  return queue;
}

int SimSlurm::NodesAsked(size_t j) const {
  const JobState& job = jobs_[j];
  if (!WholeNodes(j)) return 1;
  return Nodes(job.elastic ? job.min_devices : job.requested_devices);
}

bool SimSlurm::FitWholeNodes(int nodes, bool may_use_planned, Allocation& picked) const {
  picked.clear();
  for (size_t n = 0; n < used_.size() && static_cast<int>(picked.size()) < nodes; ++n) {
    if (used_[n] == 0 && Usable(n, may_use_planned)) {
      picked.push_back({static_cast<int>(n), cluster_.nodes[n].devices});
    }
  }
  return static_cast<int>(picked.size()) >= nodes;
}

// Best fit: the node with the fewest free devices that still hold the job (ties: lowest index).
bool SimSlurm::FitOnOneNode(int devices, bool may_use_planned, Allocation& picked) const {
  int best = -1;
  for (size_t n = 0; n < used_.size(); ++n) {
    if (Free(n) < devices || !Usable(n, may_use_planned)) continue;
    if (best < 0 || Free(n) < Free(best)) best = static_cast<int>(n);
  }
  picked.clear();
  if (best >= 0) picked.push_back({best, devices});
  return best >= 0;
}

bool SimSlurm::Fit(size_t j, bool may_use_planned, Allocation& picked) const {
  if (WholeNodes(j)) return FitWholeNodes(NodesAsked(j), may_use_planned, picked);
  return FitOnOneNode(jobs_[j].requested_devices, may_use_planned, picked);
}

// Per node: (end, devices) of the jobs on it, soonest first; Slurm's plan uses time limits,
// which the model's end estimates stand in for.
std::vector<std::vector<std::pair<double, int>>> SimSlurm::EndsPerNode(double now) const {
  std::vector<std::vector<std::pair<double, int>>> ends(used_.size());
  for (const JobState& job : jobs_) {
    for (const policy::Slice& slice : job.allocation) {
      ends[slice.node].emplace_back(std::max(job.expected_end_s, now), slice.devices);
    }
  }
  for (auto& node : ends) std::sort(node.begin(), node.end());
  return ends;
}

// The `nodes` nodes that are idle first; returns when the last of them is.
double SimSlurm::PlanWholeNodes(int nodes, double now) {
  std::vector<std::pair<double, int>> idle_at;
  const auto ends = EndsPerNode(now);
  for (size_t n = 0; n < ends.size(); ++n) {
    idle_at.emplace_back(ends[n].empty() ? now : ends[n].back().first, static_cast<int>(n));
  }
  std::sort(idle_at.begin(), idle_at.end());
  if (nodes > static_cast<int>(idle_at.size())) return kNever;
  for (int i = 0; i < nodes; ++i) planned_[idle_at[i].second] = 1;
  return nodes > 0 ? idle_at[nodes - 1].first : now;
}

// The node where `devices` devices are free first; returns when they are.
double SimSlurm::PlanOnOneNode(int devices, double now) {
  const auto ends = EndsPerNode(now);
  double best_at = kNever;
  int best = -1;
  for (size_t n = 0; n < ends.size(); ++n) {
    int free = Free(n);
    double at = now;
    for (auto end = ends[n].begin(); free < devices && end != ends[n].end(); ++end) {
      free += end->second;
      at = end->first;
    }
    if (free < devices || at >= best_at) continue;
    best_at = at;
    best = static_cast<int>(n);
  }
  if (best >= 0) planned_[best] = 1;
  return best_at;
}

double SimSlurm::PlanHead(size_t j, double now) {
  head_id_ = jobs_[j].id;
  if (WholeNodes(j)) return PlanWholeNodes(NodesAsked(j), now);
  return PlanOnOneNode(jobs_[j].requested_devices, now);
}

// (Allocations are copied, not moved: moving Boost's small_vector trips GCC 12's
// -Wstringop-overread.)
void SimSlurm::Place(size_t j, const Allocation& allocation) {
  Allocation& held = jobs_[j].allocation;
  for (const policy::Slice& slice : held) used_[slice.node] -= slice.devices;
  held = allocation;
  std::sort(held.begin(), held.end(),
            [](const policy::Slice& a, const policy::Slice& b) { return a.node < b.node; });
  for (const policy::Slice& slice : held) used_[slice.node] += slice.devices;
}

void SimSlurm::TakeMoreUpToMax(size_t j) {
  JobState& job = jobs_[j];
  Allocation more = job.allocation;
  for (size_t n = 0; n < used_.size(); ++n) {
    if (static_cast<int>(more.size()) >= Nodes(job.max_devices)) break;
    if (used_[n] == 0 && !planned_[n]) more.push_back({static_cast<int>(n), per_node_});
  }
  if (more.size() == job.allocation.size()) return;
  Place(j, more);
  for (policy::Decision& decision : out_.decisions) {
    if (decision.kind != DecisionKind::kStart || decision.job_id != job.id) continue;
    decision.allocation = job.allocation;
    decision.reason += "; as many nodes as are free, up to MAX";
  }
}

void SimSlurm::Starts(double now) {
  head_id_.clear();
  std::fill(planned_.begin(), planned_.end(), 0);
  double head_start = kNever;
  std::vector<size_t> started;
  Allocation fit;
  for (size_t j : Queue()) {
    const JobState* job = &jobs_[j];
    if (requeued_[j]) continue;
    const bool may_use_planned = now + job->expected_runtime_s <= head_start;
    if (!Fit(j, may_use_planned, fit)) {
      if (head_id_.empty()) head_start = PlanHead(j, now);
      continue;
    }
    Place(j, fit);
    jobs_[j].started_s = std::min(jobs_[j].started_s, now);
    const bool backfilled = !head_id_.empty();
    out_.decisions.push_back(
        {DecisionKind::kStart, job->id, jobs_[j].allocation,
         backfilled ? "slurm: backfilled before " + head_id_ : "slurm: started in queue order"});
    started.push_back(j);
  }
  for (size_t j : started) {
    if (jobs_[j].elastic && WholeNodes(j)) TakeMoreUpToMax(j);
  }
}

void SimSlurm::Resize(size_t j, std::vector<int> nodes, const std::string& reason) {
  Allocation allocation;
  for (int node : nodes) allocation.push_back({node, cluster_.nodes[node].devices});
  Place(j, allocation);
  out_.decisions.push_back({DecisionKind::kResize, jobs_[j].id, jobs_[j].allocation, reason});
}

void SimSlurm::Requeue(size_t j, const std::string& reason) {
  Place(j, {});
  requeued_[j] = 1;
  out_.decisions.push_back({DecisionKind::kPreempt, jobs_[j].id, {}, reason});
}

}  // namespace elastic::sim
