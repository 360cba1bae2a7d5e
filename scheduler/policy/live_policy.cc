// Slurm partition <-> Policy input and decisions (see live_policy.h).
#include "scheduler/policy/live_policy.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace elastic::policy {
namespace {

// A job without a time limit is ranked (elastic's shortest-remaining-work order) as if it had
// this much work left (reference-device seconds: a year on one device), whatever its size: long,
// but finite so its slope still counts, and equal among such jobs so they rank by slope alone.
constexpr double kNoLimitWork = 365.0 * 86400.0;

// Looked up, never iterated: hashed. Keys view the partition's node names.
using NodeIndex = std::unordered_map<std::string_view, int>;

// Node names, sorted and unique (the order of a std::set<std::string>, without a tree node and a
// string copy per name: ToLiveChanges handles every changed job's nodes).
using NameList = std::vector<std::string_view>;

NameList SortedUnique(NameList names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool Has(const NameList& names, std::string_view name) {
  return std::binary_search(names.begin(), names.end(), name);
}

// The job's slices: every device of each of its nodes. Its devices count a node the cluster
// does not show as 1, as the node-for-device model did.
Allocation AllocationOf(const LiveJob& live, const ClusterState& cluster, const NodeIndex& index,
                        int& devices) {
  Allocation allocation;
  devices = 0;
  for (const std::string& name : live.nodes) {
    auto it = index.find(name);
    if (it == index.end()) {
      ++devices;
      continue;
    }
    const int held = cluster.nodes[it->second].devices;
    allocation.push_back({it->second, held});
    devices += held;
  }
  std::sort(allocation.begin(), allocation.end(),
            [](const Slice& a, const Slice& b) { return a.node < b.node; });
  return allocation;
}

// nodes x per_node, saturated: MAX comes from the AdminComment record and is not trusted.
int DevicesOn(int nodes, int per_node) {
  const std::int64_t product = static_cast<std::int64_t>(nodes) * per_node;
  return static_cast<int>(std::clamp<std::int64_t>(product, 0, std::numeric_limits<int>::max()));
}

// Sizes in devices: MIN and MAX in nodes times the job's devices per node, never excluding its
// current size; a job held this cycle is rigid at it.
void SetSizes(const LiveJob& live, int devices, int per_node, JobState& job) {
  job.elastic = live.may_resize;
  job.min_devices =
      live.may_resize ? std::min(DevicesOn(live.min_nodes, per_node), devices) : devices;
  job.max_devices =
      live.may_resize ? std::max(DevicesOn(live.max_nodes, per_node), devices) : devices;
  job.requested_devices = devices;
}

JobState ToJobState(const LiveJob& live, const ClusterState& cluster, const NodeIndex& index,
                    const LiveOptions& options) {
  JobState job;
  job.id = std::to_string(live.job_id);
  int devices = 0;
  job.allocation = AllocationOf(live, cluster, index, devices);
  const int nodes = std::max(static_cast<int>(live.nodes.size()), 1);
  const int per_node = std::max((devices + nodes - 1) / nodes, 1);
  SetSizes(live, devices, per_node, job);
  job.cpus_per_device = 0;  // the whole node is the job's: CPUs never constrain live
  job.min_cpus_per_device = 0;
  job.submit_time_s = static_cast<double>(live.start_time);
  job.sla_class = SlaClass::kBestEffort;
  job.profile.ests = std::max(live.ests, 1);
  job.profile.comm_ratio = options.comm_ratio;
  job.profile.measured_speedup = DeviceSpeedups(live.speed_curve, per_node);
  job.last_resize_s = live.last_resize > 0 ? static_cast<double>(live.last_resize) : -kNever;
  job.started_s = static_cast<double>(live.start_time);
  job.resizes = live.resizes;
  if (live.end_time > 0) {
    job.expected_end_s = static_cast<double>(live.end_time);  // work = time left x speed
  } else {
    job.expected_end_s = kNever;
    job.remaining_work = kNoLimitWork;  // the same for every such job, whatever its size
  }
  return job;
}

}  // namespace

PolicyOptions LivePolicyOptions(const LiveOptions& options) {
  PolicyOptions p;
  p.resize_cost_s = options.resize_cost_s;
  p.min_resize_interval_s = options.min_resize_interval_s;
  p.reconfigure_threshold = options.reconfig_penalty;
  // Only guaranteed jobs' SLA reads this, and the running jobs shown are best-effort.
  p.reference_devices_per_node = 1;
  p.elastic_mixed_types = false;  // the agent places ESTs evenly (live_policy.h)
  p.preempt_best_effort = false;  // step 1 of the resize decision preempts (resize_decision.h)
  return p;
}

std::vector<double> DeviceSpeedups(const std::vector<double>& speed_curve, int devices_per_node) {
  std::vector<double> speedups;
  if (speed_curve.empty() || !(speed_curve.front() > 0)) return speedups;
  const int d = std::max(devices_per_node, 1);
  const double first = speed_curve.front();
  // Bounded so a long curve on many-GPU nodes stays small; the speedup is flat past the end.
  constexpr std::size_t kMaxPoints = std::size_t{1} << 16;
  for (std::size_t n = 0; n < speed_curve.size() && speedups.size() < kMaxPoints; ++n) {
    const double below = n == 0 ? 0.0 : speed_curve[n - 1];  // n whole nodes
    for (int r = 1; r <= d; ++r) {  // n nodes and r devices of the next one
      // The whole node's point exactly (so d = 1 gives curve[n] / curve[0] to the last bit).
      const double rate = r == d ? speed_curve[n] : below + (speed_curve[n] - below) * r / d;
      speedups.push_back(d * rate / first);
    }
  }
  return speedups;
}

PolicyInput ToPolicyInput(const LivePartition& partition, const LiveOptions& options) {
  PolicyInput input;
  NodeIndex index;
  index.reserve(partition.held.size() + partition.free.size());
  input.cluster.nodes.reserve(partition.held.size() + partition.free.size());
  auto add = [&](const LiveNode& node, bool free) {
    const int next = static_cast<int>(input.cluster.nodes.size());
    if (!index.try_emplace(node.name, next).second) return;
    NodeState n;
    n.name = node.name;
    n.device_type = node.device_type;
    n.capability = node.capability > 0 ? node.capability : 1.0;
    n.devices = std::max(node.devices, 1);
    n.free_devices = free ? n.devices : 0;
    n.cpus = node.cpus;
    n.free_cpus = free ? node.cpus : 0;
    input.cluster.nodes.push_back(std::move(n));
  };
  for (const LiveNode& node : partition.held) add(node, false);
  for (const LiveNode& node : partition.free) add(node, true);
  input.jobs.reserve(partition.jobs.size());
  for (const LiveJob& live : partition.jobs) {
    input.jobs.push_back(ToJobState(live, input.cluster, index, options));
  }
  return input;
}

std::vector<LiveChange> ToLiveChanges(const LivePartition& partition, const PolicyInput& input,
                                      const PolicyOutput& output, std::string_view policy_name) {
  std::unordered_map<std::string, const LiveJob*> jobs;  // looked up, never iterated
  jobs.reserve(partition.jobs.size());
  for (const LiveJob& job : partition.jobs) jobs[std::to_string(job.job_id)] = &job;
  std::unordered_set<std::string_view> growable;
  growable.reserve(partition.free.size());
  for (const LiveNode& node : partition.free) growable.insert(node.name);
  std::vector<LiveChange> changes;
  for (const Decision& decision : output.decisions) {
    if (decision.kind != DecisionKind::kResize) continue;  // no starts or requeues live
    auto it = jobs.find(decision.job_id);
    if (it == jobs.end() || !it->second->may_resize) continue;
    const LiveJob& job = *it->second;
    const NameList now = SortedUnique(NameList(job.nodes.begin(), job.nodes.end()));
    NameList next;
    for (const Slice& slice : decision.allocation) {
      if (slice.devices > 0 && slice.node >= 0 &&
          slice.node < static_cast<int>(input.cluster.nodes.size())) {
        next.push_back(input.cluster.nodes[slice.node].name);
      }
    }
    next = SortedUnique(std::move(next));
    const int from = static_cast<int>(now.size());
    const int to = std::clamp(static_cast<int>(next.size()), std::min(job.min_nodes, from),
                              std::max(job.max_nodes, from));
    NameList target = now;
    std::string note;
    if (to > from) {
      int added = 0;
      for (std::string_view n : next) {
        if (added == to - from) break;
        if (Has(now, n) || !growable.contains(n)) continue;
        target.push_back(n);
        growable.erase(n);  // one job per node, even if a policy were to double-book
        ++added;
      }
      target = SortedUnique(std::move(target));
      if (added < to - from) {
        note = "; " + std::to_string(to - from - added) +
               " more once the nodes it takes from other jobs are released";
      }
    } else if (to < from) {
      // Release what the policy dropped, then (batch host kept) the last names of the rest.
      NameList order;
      for (std::string_view n : now) {
        if (!Has(next, n) && n != job.batch_host) order.push_back(n);
      }
      NameList rest;
      for (std::string_view n : now) {
        if (Has(next, n) && n != job.batch_host) rest.push_back(n);
      }
      order.insert(order.end(), rest.rbegin(), rest.rend());
      for (int i = 0; i < from - to && i < static_cast<int>(order.size()); ++i) {
        target.erase(std::lower_bound(target.begin(), target.end(), order[i]));
      }
    }
    if (target == now) continue;  // equal-size moves (re-placement) are not done live
    LiveChange change;
    change.job_id = job.job_id;
    change.target.assign(target.begin(), target.end());
    std::string reason = decision.reason;
    // The policies write their own name first ("easyscale: ..."); rubick/elastic do not.
    if (reason.rfind(std::string(policy_name) + ":", 0) != 0) {
      reason = std::string(policy_name) + ": " + reason;
    }
    change.reason = reason + note;
    changes.push_back(std::move(change));
  }
  std::sort(changes.begin(), changes.end(),
            [](const LiveChange& a, const LiveChange& b) { return a.job_id < b.job_id; });
  return changes;
}

std::vector<LiveChange> DecideLive(const Policy& policy, const LivePartition& partition,
                                   const LiveOptions& options) {
  if (partition.jobs.empty()) return {};
  PolicyInput input = ToPolicyInput(partition, options);
  PolicyOutput output =
      policy.Decide(input.cluster, input.jobs, static_cast<double>(partition.now));
  return ToLiveChanges(partition, input, output, policy.Name());
}

}  // namespace elastic::policy
