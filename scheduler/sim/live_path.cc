// LivePathPolicy: a simulated Slurm around elasticd's own resize decision (see live_path.h).
#include "scheduler/sim/live_path.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "scheduler/policy/live_policy.h"

namespace elastic::sim {
namespace {

using policy::Allocation;
using policy::ClusterState;
using policy::DecisionKind;
using policy::JobState;
using policy::kNever;

// Simulator seconds as Slurm's unix seconds: a fixed epoch keeps 0 meaning "never".
constexpr std::int64_t kEpoch = 1'000'000'000;
std::int64_t Unix(double seconds) { return kEpoch + static_cast<std::int64_t>(std::floor(seconds)); }

std::string NodeName(size_t node) {
  char name[16];
  std::snprintf(name, sizeof name, "n%05zu", node);  // zero-padded: name order = index order
  return name;
}

// The simulated Slurm within one Decide call: who holds each node, and what was decided.
struct SlurmState {
  const ClusterState& cluster;
  int per_node = 1;              // devices per node
  std::vector<JobState> jobs;    // the simulator's, updated as decided
  std::vector<int> holder;       // per node: index into jobs, -1 idle
  std::vector<char> planned;     // per node: planned for the blocked head (`sched_nodes`)
  std::string head_id;           // the blocked head, "" when none
  std::vector<char> requeued;    // per job: preempted in this call (Slurm holds it back)
  policy::PolicyOutput out;

  int Nodes(int devices) const { return devices / per_node; }
  int HeldNodes(size_t j) const { return Nodes(policy::DeviceCount(jobs[j].allocation)); }
};

SlurmState Load(const ClusterState& cluster, const std::vector<JobState>& jobs, int per_node) {
  SlurmState s{cluster, per_node, jobs, std::vector<int>(cluster.nodes.size(), -1),
               std::vector<char>(cluster.nodes.size(), 0), "", std::vector<char>(jobs.size(), 0),
               {}};
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (const policy::Slice& slice : jobs[j].allocation) s.holder[slice.node] = static_cast<int>(j);
  }
  return s;
}

// Gives job `j` exactly `nodes`, every device of each; returns its allocation.
Allocation SetNodes(SlurmState& s, size_t j, std::vector<int> nodes) {
  for (const policy::Slice& slice : s.jobs[j].allocation) s.holder[slice.node] = -1;
  std::sort(nodes.begin(), nodes.end());
  Allocation allocation;
  for (int node : nodes) {
    s.holder[node] = static_cast<int>(j);
    allocation.push_back({node, s.cluster.nodes[node].devices});
  }
  s.jobs[j].allocation = allocation;
  return allocation;
}

void Assign(SlurmState& s, size_t j, std::vector<int> nodes, DecisionKind kind,
            const std::string& reason) {
  s.out.decisions.push_back({kind, s.jobs[j].id, SetNodes(s, j, std::move(nodes)), reason});
}

// Nodes as Slurm's backfill sees them: one unit each, free when idle; jobs sized in nodes, an
// elastic one asking for its MIN (Slurm starts a node range as soon as MIN nodes are free).
struct NodeView {
  ClusterState cluster;
  std::vector<JobState> jobs;
};

NodeView NodeUnits(const SlurmState& s) {
  NodeView v;
  v.cluster.environment = s.cluster.environment;
  for (size_t n = 0; n < s.cluster.nodes.size(); ++n) {
    policy::NodeState node;
    node.name = NodeName(n);
    node.device_type = "node";
    node.devices = 1;
    node.free_devices = s.holder[n] < 0 ? 1 : 0;
    v.cluster.nodes.push_back(node);
  }
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const JobState& job = s.jobs[j];
    if (s.requeued[j]) continue;
    JobState unit = job;
    const int nodes = s.Nodes(job.elastic ? job.min_devices : job.requested_devices);
    unit.requested_devices = unit.min_devices = unit.max_devices = nodes;
    unit.cpus_per_device = 0;
    unit.memory_mb_per_device = unit.offload_mb_per_device = 0;
    unit.allocation.clear();
    for (const policy::Slice& slice : job.allocation) unit.allocation.push_back({slice.node, 1});
    v.jobs.push_back(std::move(unit));
  }
  return v;
}

// The head's planned nodes: those free now, then those whose jobs end first (Slurm's plan).
void PlanHead(SlurmState& s, size_t head, double now) {
  std::vector<std::pair<double, int>> free_at;
  for (size_t n = 0; n < s.holder.size(); ++n) {
    const double at = s.holder[n] < 0 ? now : s.jobs[s.holder[n]].expected_end_s;
    free_at.emplace_back(at, static_cast<int>(n));
  }
  std::stable_sort(free_at.begin(), free_at.end());
  const int need = s.Nodes(s.jobs[head].elastic ? s.jobs[head].min_devices
                                                 : s.jobs[head].requested_devices);
  std::fill(s.planned.begin(), s.planned.end(), 0);
  for (int i = 0; i < need && i < static_cast<int>(free_at.size()); ++i) {
    s.planned[free_at[i].second] = 1;
  }
  s.head_id = s.jobs[head].id;
}

// Slurm's pass: EASY backfill starts in queue order; an elastic job also gets idle nodes up to
// its MAX that the head is not planned on.
void SlurmStarts(SlurmState& s, const policy::Policy& backfill, double now) {
  NodeView units = NodeUnits(s);
  const policy::PolicyOutput planned = backfill.Decide(units.cluster, units.jobs, now);
  std::map<std::string, size_t> index;
  for (size_t j = 0; j < s.jobs.size(); ++j) index[s.jobs[j].id] = j;
  s.head_id.clear();
  std::fill(s.planned.begin(), s.planned.end(), 0);
  for (const policy::Decision& start : planned.decisions) {
    const size_t j = index.at(start.job_id);
    std::vector<int> nodes;
    for (const policy::Slice& slice : start.allocation) nodes.push_back(slice.node);
    Assign(s, j, nodes, DecisionKind::kStart, "slurm: " + start.reason);
    s.jobs[j].started_s = std::min(s.jobs[j].started_s, now);
  }
  if (!planned.reservations.empty()) PlanHead(s, index.at(planned.reservations[0].job_id), now);
  for (const policy::Decision& start : planned.decisions) {
    const size_t j = index.at(start.job_id);
    JobState& job = s.jobs[j];
    std::vector<int> nodes;
    for (const policy::Slice& slice : job.allocation) nodes.push_back(slice.node);
    for (size_t n = 0; job.elastic && n < s.holder.size(); ++n) {
      if (static_cast<int>(nodes.size()) >= s.Nodes(job.max_devices)) break;
      if (s.holder[n] < 0 && !s.planned[n]) nodes.push_back(static_cast<int>(n));
    }
    if (nodes.size() == job.allocation.size()) continue;
    const Allocation more = SetNodes(s, j, nodes);
    for (policy::Decision& decision : s.out.decisions) {
      if (decision.kind == DecisionKind::kStart && decision.job_id == job.id) {
        decision.allocation = more;
        decision.reason += "; as many nodes as are free, up to MAX";
      }
    }
  }
}

policy::SlurmJob ToSlurmJob(const SlurmState& s, size_t j, std::uint32_t priority) {
  const JobState& job = s.jobs[j];
  policy::SlurmJob out;
  out.job_id = static_cast<std::uint32_t>(j + 1);
  out.partition = "main";
  out.account = job.tenant;
  out.sla_class = job.sla_class;
  out.priority = priority;
  if (job.running()) {
    out.state = policy::SlurmJobState::kRunning;
    for (const policy::Slice& slice : job.allocation) out.nodes.push_back(NodeName(slice.node));
    out.batch_host = out.nodes.front();
    out.min_nodes = static_cast<int>(out.nodes.size());
    out.start_time = Unix(job.started_s);
    out.end_time = job.expected_end_s == kNever ? 0 : Unix(job.expected_end_s);
    return out;
  }
  out.state = policy::SlurmJobState::kPending;
  out.reason = job.id == s.head_id ? "Resources" : "Priority";
  out.min_nodes = s.Nodes(job.elastic ? job.min_devices : job.requested_devices);
  for (size_t n = 0; job.id == s.head_id && n < s.planned.size(); ++n) {
    if (s.planned[n]) out.sched_nodes.push_back(NodeName(n));
  }
  return out;
}

// elasticd's registry: every running elastic job, registered with its -N MIN-MAX and ESTs.
std::vector<policy::ElasticJob> Registry(const SlurmState& s) {
  std::vector<policy::ElasticJob> registry;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const JobState& job = s.jobs[j];
    if (!job.running() || !job.elastic || s.requeued[j]) continue;
    policy::ElasticJob e;
    e.job_id = static_cast<std::uint32_t>(j + 1);
    e.min_nodes = s.Nodes(job.min_devices);
    e.max_nodes = s.Nodes(job.max_devices);
    e.ests = job.profile.ests;
    e.resizes = job.resizes;
    e.last_resize = job.resizes > 0 && job.last_resize_s > -kNever ? Unix(job.last_resize_s) : 0;
    registry.push_back(e);
  }
  return registry;
}

// What elasticd reads from Slurm: nodes n00000.., running jobs on them, the pending queue.
policy::SlurmView ToSlurmView(const SlurmState& s, double now) {
  policy::SlurmView view;
  view.now = Unix(now);
  for (size_t n = 0; n < s.cluster.nodes.size(); ++n) {
    const policy::NodeState& node = s.cluster.nodes[n];
    policy::SlurmNode out;
    out.name = NodeName(n);
    out.partitions = {"main"};
    out.cpus = std::max(node.cpus, 1);
    out.alloc_cpus = s.holder[n] >= 0 ? out.cpus : 0;
    out.devices = node.devices;
    out.gpu_type = node.device_type;  // capabilities: the cluster's, as [node_types]
    out.available = true;
    view.nodes.push_back(out);
  }
  std::map<std::string, std::uint32_t> priority;  // Slurm's: queue order, first highest
  const std::vector<const JobState*> queue = policy::QueueOrder(s.jobs);
  for (size_t rank = 0; rank < queue.size(); ++rank) {
    priority[queue[rank]->id] = static_cast<std::uint32_t>(queue.size() - rank);
  }
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (s.requeued[j]) continue;
    view.jobs.push_back(ToSlurmJob(s, j, priority[s.jobs[j].id]));
  }
  return view;
}

// One elasticd cycle: its preemptions and resize orders, carried out at once.
void ElasticdCycle(SlurmState& s, const policy::Policy& policy,
                   const policy::ResizeDecisionOptions& options, double now) {
  const policy::ResizeDecision decision =
      policy::DecideResizes(ToSlurmView(s, now), Registry(s), options, policy);
  std::map<std::string, int> node_index;
  for (size_t n = 0; n < s.holder.size(); ++n) node_index[NodeName(n)] = static_cast<int>(n);
  for (const policy::Preemption& preemption : decision.preemptions) {
    const size_t j = preemption.job_id - 1;
    SetNodes(s, j, {});
    s.requeued[j] = 1;
    s.out.decisions.push_back({DecisionKind::kPreempt, s.jobs[j].id, {}, preemption.reason});
  }
  // Shrinks first: a grow never needs their nodes, a later start may.
  for (policy::ResizeKind kind : {policy::ResizeKind::kShrink, policy::ResizeKind::kGrow}) {
    for (const policy::ResizeProposal& order : decision.proposals) {
      if (order.kind != kind) continue;
      std::vector<int> nodes;
      for (const std::string& name : order.target_nodes) nodes.push_back(node_index.at(name));
      Assign(s, order.job_id - 1, nodes, DecisionKind::kResize, "elasticd: " + order.reason);
    }
  }
}

}  // namespace

int UniformNodeDevices(const ClusterState& cluster) {
  if (cluster.nodes.empty()) return 0;
  const int devices = cluster.nodes.front().devices;
  for (const policy::NodeState& node : cluster.nodes) {
    if (node.devices != devices) return 0;
  }
  return devices;
}

LivePathPolicy::LivePathPolicy(std::unique_ptr<policy::Policy> inner,
                               policy::ResizeDecisionOptions options)
    : inner_(std::move(inner)),
      slurm_(*policy::MakePolicy("backfill")),
      options_(std::move(options)),
      name_(std::string(inner_->Name()) + "-live") {}

Result<std::unique_ptr<LivePathPolicy>> LivePathPolicy::Make(
    const std::string& policy, const policy::ResizeDecisionOptions& options) {
  using Made = Result<std::unique_ptr<LivePathPolicy>>;
  // As elasticd builds it (daemon_cycle.cc).
  Result<std::unique_ptr<policy::Policy>> inner = policy::MakePolicy(
      policy, policy::LivePolicyOptions(policy::LiveOptionsFrom(options)));
  if (!inner) return Made::Fail(inner.error);
  if (!(*inner)->WantsElasticJobs()) {
    return Made::Fail("--live replays elasticd, which resizes only under easyscale, rubick or "
                      "elastic (not \"" + policy + "\")");
  }
  return Made::Ok(std::unique_ptr<LivePathPolicy>(new LivePathPolicy(std::move(*inner), options)));
}

policy::PolicyOutput LivePathPolicy::Decide(const ClusterState& cluster,
                                            const std::vector<JobState>& jobs,
                                            double now_s) const {
  SlurmState s = Load(cluster, jobs, std::max(UniformNodeDevices(cluster), 1));
  policy::ResizeDecisionOptions options = options_;
  options.quotas = cluster.tenant_quota;  // the replay's tenants are Slurm accounts
  for (const policy::NodeState& node : cluster.nodes) {
    options.node_types[node.device_type] = node.capability;
  }
  SlurmStarts(s, *slurm_, now_s);
  ElasticdCycle(s, *inner_, options, now_s);
  SlurmStarts(s, *slurm_, now_s);
  return std::move(s.out);
}

}  // namespace elastic::sim
