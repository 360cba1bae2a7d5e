// LivePathPolicy: a simulated Slurm around elasticd's own resize decision (see live_path.h).
#include "scheduler/sim/live_path.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "scheduler/policy/live_policy.h"
#include "scheduler/sim/sim_slurm.h"

namespace elastic::sim {
namespace {

using policy::ClusterState;
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

policy::SlurmJob ToSlurmJob(const SimSlurm& s, size_t j, std::uint32_t priority,
                            std::int64_t elastic_nice) {
  const JobState& job = s.jobs()[j];
  policy::SlurmJob out;
  out.job_id = static_cast<std::uint32_t>(j + 1);
  out.submit_time = Unix(job.submit_time_s);
  // The model's run time at the request stands in for the time limit, as for end times.
  out.time_limit_s = std::max<std::int64_t>(1, std::llround(job.expected_runtime_s));
  out.nice = s.Yields(j) ? elastic_nice : 0;
  out.partition = "main";
  out.account = job.tenant;
  out.sla_class = job.sla_class;
  out.elastic = job.elastic;
  out.priority = priority;
  out.exclusive = s.WholeNodes(j);
  if (job.running()) {
    out.state = policy::SlurmJobState::kRunning;
    for (const policy::Slice& slice : job.allocation) out.nodes.push_back(NodeName(slice.node));
    out.batch_host = out.nodes.front();
    out.min_nodes = static_cast<int>(out.nodes.size());
    out.start_time = Unix(job.started_s);
    out.end_time = job.expected_end_s == kNever ? 0 : Unix(job.expected_end_s);
    // Unknown, as for devices Slurm does not allocate as gres: a job holding gres GPUs cannot
    // grow on Slurm 22.05 (resize_growth.cc), and the replay shows elasticd where growth works.
    out.gpus = -1;
    return out;
  }
  out.state = policy::SlurmJobState::kPending;
  out.reason = job.id == s.head_id() ? "Resources" : "Priority";
  out.min_nodes = s.NodesAsked(j);
  for (size_t n = 0; job.id == s.head_id() && n < s.cluster().nodes.size(); ++n) {
    if (s.Planned(n)) out.sched_nodes.push_back(NodeName(n));
  }
  return out;
}

// elasticd's registry: every running elastic job, registered with its -N MIN-MAX and ESTs.
std::vector<policy::ElasticJob> Registry(const SimSlurm& s) {
  std::vector<policy::ElasticJob> registry;
  for (size_t j = 0; j < s.jobs().size(); ++j) {
    const JobState& job = s.jobs()[j];
    if (!job.running() || !job.elastic || s.Requeued(j)) continue;
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

// What elasticd reads from Slurm: nodes n00000.. (a node some job uses has CPUs allocated in
// proportion to its devices held), running jobs on them, the pending queue.
policy::SlurmView ToSlurmView(const SimSlurm& s, double now, std::int64_t elastic_nice) {
  policy::SlurmView view;
  view.now = Unix(now);
  for (size_t n = 0; n < s.cluster().nodes.size(); ++n) {
    const policy::NodeState& node = s.cluster().nodes[n];
    policy::SlurmNode out;
    out.name = NodeName(n);
    out.partitions = {"main"};
    out.cpus = std::max(node.cpus, 1);
    out.alloc_cpus = s.Used(n) == 0 ? 0 : std::max(1, out.cpus * s.Used(n) / node.devices);
    out.devices = node.devices;
    out.gpu_type = node.device_type;  // capabilities: the cluster's, as [node_types]
    out.available = true;
    view.nodes.push_back(out);
  }
  std::vector<std::uint32_t> priority(s.jobs().size(), 0);  // Slurm's: queue order, first highest
  const std::vector<size_t> queue = s.Queue();
  for (size_t rank = 0; rank < queue.size(); ++rank) {
    priority[queue[rank]] = static_cast<std::uint32_t>(queue.size() - rank);
  }
  for (size_t j = 0; j < s.jobs().size(); ++j) {
    if (s.Requeued(j)) continue;
    view.jobs.push_back(ToSlurmJob(s, j, priority[j], elastic_nice));
  }
  return view;
}

// The nices elasticd took back in earlier cycles. A lift is monotone in time (a job still waiting
// that met its bound then meets it now), so the rule itself, on this event's view, recovers them
// without state carried between events.
// The rule reads only the waiting jobs, so only they are shown (no nodes, no queue order).
void LiftEarlierNices(SimSlurm& s, const policy::NiceLiftOptions& options, double now) {
  policy::SlurmView waiting;
  waiting.now = Unix(now);
  for (size_t j = 0; j < s.jobs().size(); ++j) {
    if (s.jobs()[j].running() || !s.Yields(j)) continue;
    waiting.jobs.push_back(ToSlurmJob(s, j, /*priority=*/0, options.elastic_nice));
  }
  for (const policy::NiceLift& lift : policy::ChooseNiceLifts(waiting, options)) {
    s.LiftNice(lift.job_id - 1);
  }
}

// One elasticd cycle: its preemptions and resize orders, carried out at once.
void ElasticdCycle(SimSlurm& s, const policy::Policy& policy,
                   const policy::ResizeDecisionOptions& options, double now) {
  const policy::ResizeDecision decision = policy::DecideResizes(
      ToSlurmView(s, now, options.nice_lift.elastic_nice), Registry(s), options, policy);
  std::map<std::string, int> node_index;
  for (size_t n = 0; n < s.cluster().nodes.size(); ++n) {
    node_index[NodeName(n)] = static_cast<int>(n);
  }
  for (const policy::Preemption& preemption : decision.preemptions) {
    s.Requeue(preemption.job_id - 1, preemption.reason);
  }
  for (const policy::NiceLift& lift : decision.nice_lifts) s.LiftNice(lift.job_id - 1);
  // Shrinks first: a grow never needs their nodes, a later start may.
  for (policy::ResizeKind kind : {policy::ResizeKind::kShrink, policy::ResizeKind::kGrow}) {
    for (const policy::ResizeProposal& order : decision.proposals) {
      if (order.kind != kind) continue;
      std::vector<int> nodes;
      for (const std::string& name : order.target_nodes) nodes.push_back(node_index.at(name));
      s.Resize(order.job_id - 1, nodes, "elasticd: " + order.reason);
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
                               policy::ResizeDecisionOptions options, SlurmSite site)
    : inner_(std::move(inner)),
      options_(std::move(options)),
      site_(site),
      name_(std::string(inner_->Name()) + "-live") {}

Result<std::unique_ptr<LivePathPolicy>> LivePathPolicy::Make(
    const std::string& policy, const policy::ResizeDecisionOptions& options, SlurmSite site) {
  using Made = Result<std::unique_ptr<LivePathPolicy>>;
  // As elasticd builds it (daemon_cycle.cc).
  Result<std::unique_ptr<policy::Policy>> inner = policy::MakePolicy(
      policy, policy::LivePolicyOptions(policy::LiveOptionsFrom(options)));
  if (!inner) return Made::Fail(inner.error);
  if (!(*inner)->WantsElasticJobs()) {
    return Made::Fail("--live replays elasticd, which resizes only under easyscale, rubick or "
                      "elastic (not \"" + policy + "\")");
  }
  return Made::Ok(
      std::unique_ptr<LivePathPolicy>(new LivePathPolicy(std::move(*inner), options, site)));
}

policy::PolicyOutput LivePathPolicy::Decide(const ClusterState& cluster,
                                            const std::vector<JobState>& jobs,
                                            double now_s) const {
  SimSlurm s(cluster, jobs, std::max(UniformNodeDevices(cluster), 1), site_);
  policy::ResizeDecisionOptions options = options_;
  options.quotas = cluster.tenant_quota;  // the replay's tenants are Slurm accounts
  for (const policy::NodeState& node : cluster.nodes) {
    options.node_types[node.device_type] = node.capability;
  }
  LiftEarlierNices(s, options.nice_lift, now_s);
  s.Starts(now_s);
  ElasticdCycle(s, *inner_, options, now_s);
  s.Starts(now_s);
  return s.TakeOutput();
}

}  // namespace elastic::sim
